/*
 * What rcomp-view keeps of the session's prints under way (print.h): types
 * only, for viewer.h.
 */
#ifndef RCOMP_PRINT_STATE_H
#define RCOMP_PRINT_STATE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#define RV_PRINT_JOBS 4 /* lp runs at once; more wait in the PDF's folder, said so */

/* What a print of the session's becomes here (the print setting). */
enum rv_print_action {
	RV_PRINT_LP, /* the local default printer, with lp */
	RV_PRINT_SAVE, /* saved in the download folder only */
	RV_PRINT_OPEN, /* opened (xdg-open), to be printed from there */
};

/* One lp running: its output read until it ends. */
struct rv_print_job {
	pid_t pid; /* 0: a free slot */
	int fd; /* its stdout and stderr */
	char said[512];
	size_t said_len;
	char path[PATH_MAX];
};

#endif
