/* pattern-spin.S: pattern.S that spins once it has written (a lessee to kill). */
#define SPIN 1
#include "pattern.S"
