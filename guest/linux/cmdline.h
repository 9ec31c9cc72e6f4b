/* The Linux guest's command line: the workload's words after " -- ", split and unquoted as the kernel does. */
#ifndef CMDLINE_H
#define CMDLINE_H

#include <stddef.h>

/*
 * One word of a kernel command line at s (not at a space), as the kernel's
 * lib/cmdline.c next_arg() and init/main.c repair_env_string() leave an
 * argument for init: a word ends at a space outside double quotes (a quote
 * opens or closes anywhere in it; there are no escapes); a leading quote
 * and the word's last quote go, as do the quotes around the value of
 * NAME="VALUE". Writes NULs into s; *word is the word; returns where the
 * next word starts (past the spaces).
 */
char *lx_cmdline_next(char *s, char **word);

/*
 * The words after the first word "--" of cmdline (/proc/cmdline, its
 * newline removed), unquoted as above, at most max of them into args, which
 * has room for max + 1 (a NULL ends them); cmdline is written into. How
 * many, or -1 when there is no "--".
 */
int lx_cmdline_args(char *cmdline, char **args, size_t max);

#endif /* CMDLINE_H */
