/* Shared-memory buffers: a memfd, mapped here and handed to the compositor. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "shm.h"

struct wl_buffer *shm_buffer_create(struct rv_viewer *viewer, int32_t width, int32_t height,
	bool opaque, void **data)
{
	size_t size = (size_t)width * height * 4;
	int fd = memfd_create("rcomp-buffer", MFD_CLOEXEC);
	if (fd < 0) {
		log_error("cannot create a buffer: %s", strerror(errno));
		return NULL;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		log_error("cannot size a %zu byte buffer: %s", size, strerror(errno));
		close(fd);
		return NULL;
	}
	*data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*data == MAP_FAILED) {
		log_error("cannot map a buffer: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	struct wl_shm_pool *pool = wl_shm_create_pool(viewer->shm, fd, (int32_t)size);
	struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, width, height, width * 4,
		opaque ? WL_SHM_FORMAT_XRGB8888 : WL_SHM_FORMAT_ARGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	return buffer;
}
