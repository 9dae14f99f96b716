/*
 * The network process's box: once it serves, a seccomp filter allows it
 * only the system calls it makes (no exec, no fork, no file written, no
 * privilege asked), for all its threads; see sandbox.c for the list.
 */
#ifndef RCOMP_GATE_SANDBOX_H
#define RCOMP_GATE_SANDBOX_H

#include <stdbool.h>

/* False (logged) if the filter could not be loaded. */
bool sandbox_enter(void);

#endif
