/* The session's prints on this desktop (print.c). */
#ifndef RCOMP_VIEWER_PRINT_H
#define RCOMP_VIEWER_PRINT_H

struct pollfd;
struct rv_viewer;

/* A print the session sent, saved at path: printed with lp, opened, or
 * only said, as the print setting says. */
void print_received(struct rv_viewer *viewer, const char *path);
/* A saved file opened with xdg-open, left to run on its own (a print, or
 * what the session sent, with --open-files). */
void print_open(const char *path);
/* lp's outputs, read in the poll loop (RV_PRINT_JOBS entries). */
void print_poll_fds(struct rv_viewer *viewer, struct pollfd *pfds);
void print_handle_poll(struct rv_viewer *viewer, const struct pollfd *pfds);
void print_finish(struct rv_viewer *viewer);

#endif
