/* Port 0xE9 byte by byte (a line per 64 bytes), forever: the devices' line buffers. */
#include "flood.inc"

_start:
	mov $MVM_DEBUGCON_PORT, %dx
1:	lea line(%rip), %rsi
	mov $len, %ecx
	rep outsb
	jmp 1b
line:	.ascii "a flood of bytes through the debug console, one exit per byte\n"
	.set len, . - line
