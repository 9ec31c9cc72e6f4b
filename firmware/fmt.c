/* A small vsnprintf for the firmware and the workloads (no floating point). */
#include "firmware.h"

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

static void number(struct out *o, uint64_t v, int neg, int base, int width, int zero,
		   int left)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	width -= n + neg;
	if (!left && !zero)
		pad(o, ' ', width);
	if (neg)
		put(o, '-');
	if (!left && zero)
		pad(o, '0', width);
	while (n)
		put(o, tmp[--n]);
	if (left)
		pad(o, ' ', width);
}

int fw_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		int width = 0, zero = 0, left = 0, lng = 0;
		const char *s;
		uint64_t u;
		int64_t i;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (; *fmt == '-' || *fmt == '0'; fmt++) {
			if (*fmt == '-')
				left = 1;
			else
				zero = 1;
		}
		for (; *fmt >= '0' && *fmt <= '9'; fmt++)
			width = width * 10 + (*fmt - '0');
		for (; *fmt == 'l' || *fmt == 'z'; fmt++)
			lng = 1;
		switch (*fmt) {
		case 'd':
		case 'i':
			i = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
			u = i < 0 ? -(uint64_t)i : (uint64_t)i;
			number(&o, u, i < 0, 10, width, zero, left);
			break;
		case 'u':
		case 'x':
			u = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int);
			number(&o, u, 0, *fmt == 'u' ? 10 : 16, width, zero, left);
			break;
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			number(&o, (uintptr_t)va_arg(ap, void *), 0, 16, width, zero,
			       left);
			break;
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 's':
			s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			i = (int64_t)strlen(s);
			if (!left)
				pad(&o, ' ', width - (int)i);
			while (*s)
				put(&o, *s++);
			if (left)
				pad(&o, ' ', width - (int)i);
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			put(&o, '%');
			if (!*fmt)
				goto done;
			put(&o, *fmt);
		}
	}
done:
	if (o.size)
		o.buf[o.len < o.size ? o.len : o.size - 1] = '\0';
	return (int)o.len;
}

int fw_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fw_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
