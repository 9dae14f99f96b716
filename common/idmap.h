/*
 * Windows by id, in both programs: a small open-addressing hash map from
 * nonzero 32-bit ids to pointers.
 */
#ifndef RCOMP_IDMAP_H
#define RCOMP_IDMAP_H

#include <stdbool.h>
#include <stdint.h>

struct idmap {
	uint32_t *ids; /* 0: a free slot */
	void **values;
	uint32_t capacity; /* a power of two, or 0 */
	uint32_t count;
};

void idmap_init(struct idmap *map);
void idmap_finish(struct idmap *map);
/* NULL if id is not in the map. */
void *idmap_get(const struct idmap *map, uint32_t id);
/* Adds or replaces; false when out of memory or for id 0. */
bool idmap_put(struct idmap *map, uint32_t id, void *value);
void idmap_remove(struct idmap *map, uint32_t id);

#endif
