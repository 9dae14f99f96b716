/*
 * --check-config: the configuration and everything it names, checked as
 * the gate would meet them, every problem said in one run.
 */
#ifndef RCOMP_GATE_CHECK_H
#define RCOMP_GATE_CHECK_H

/*
 * Reads path, saying each problem of the file on its own line with its
 * FILE:LINE; then checks what it names: the certificate and the key (each
 * what it says it is, a pair, in date, the key not readable by all), the
 * listen address (bound and released: in use, not this host's, or a port
 * that needs privilege), the system user, the PAM service, the page and
 * rcomp-run; and says as warnings an allow-list naming an app no system
 * entry has, and a menu with nothing in it. Returns the number of
 * problems (warnings are not counted).
 */
int check_config(const char *path);

#endif
