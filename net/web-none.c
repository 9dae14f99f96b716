/* Built without libwebsockets: no browser viewers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "web.h"

struct web *web_listen(const struct web_config *config, char *err, size_t err_size)
{
	snprintf(err, err_size, "this rcomp-run was built without libwebsockets");
	errno = ENOSYS;
	return NULL;
}

void web_close(struct web *web)
{
}

int web_fd(const struct web *web)
{
	return -1;
}

int web_accept(struct web *web, char host[WEB_HOST_MAX], int *port)
{
	return -1;
}
