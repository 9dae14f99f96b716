/* Linear probing with backward-shift deletion: no tombstones, so lookups
 * stay short however many windows come and go. */
#include <stdlib.h>

#include "idmap.h"

static uint32_t slot_of(const struct idmap *map, uint32_t id)
{
	/* Fibonacci hashing spreads sequential ids. */
	return (uint32_t)((id * 2654435769u) & (map->capacity - 1));
}

void idmap_init(struct idmap *map)
{
	*map = (struct idmap){0};
}

void idmap_finish(struct idmap *map)
{
	free(map->ids);
	free(map->values);
	*map = (struct idmap){0};
}

void *idmap_get(const struct idmap *map, uint32_t id)
{
	if (id == 0 || map->capacity == 0) {
		return NULL;
	}
	for (uint32_t i = slot_of(map, id);; i = (i + 1) & (map->capacity - 1)) {
		if (map->ids[i] == id) {
			return map->values[i];
		}
		if (map->ids[i] == 0) {
			return NULL;
		}
	}
}

static bool grow(struct idmap *map)
{
	struct idmap bigger = {.capacity = map->capacity ? map->capacity * 2 : 16};
	bigger.ids = calloc(bigger.capacity, sizeof(*bigger.ids));
	bigger.values = calloc(bigger.capacity, sizeof(*bigger.values));
	if (!bigger.ids || !bigger.values) {
		idmap_finish(&bigger);
		return false;
	}
	for (uint32_t i = 0; i < map->capacity; i++) {
		if (map->ids[i]) {
			idmap_put(&bigger, map->ids[i], map->values[i]);
		}
	}
	idmap_finish(map);
	*map = bigger;
	return true;
}

bool idmap_put(struct idmap *map, uint32_t id, void *value)
{
	if (id == 0) {
		return false;
	}
	/* At most half full. */
	if ((map->count + 1) * 2 > map->capacity && !grow(map)) {
		return false;
	}
	uint32_t i = slot_of(map, id);
	while (map->ids[i] != 0 && map->ids[i] != id) {
		i = (i + 1) & (map->capacity - 1);
	}
	if (map->ids[i] == 0) {
		map->count++;
	}
	map->ids[i] = id;
	map->values[i] = value;
	return true;
}

void idmap_remove(struct idmap *map, uint32_t id)
{
	if (id == 0 || map->capacity == 0) {
		return;
	}
	uint32_t mask = map->capacity - 1, i = slot_of(map, id);
	while (map->ids[i] != id) {
		if (map->ids[i] == 0) {
			return;
		}
		i = (i + 1) & mask;
	}
	/* Shift later members of the run back over the hole, so that no
	 * lookup stops early at it. */
	for (uint32_t j = (i + 1) & mask; map->ids[j] != 0; j = (j + 1) & mask) {
		uint32_t home = slot_of(map, map->ids[j]);
		/* Move j to i unless its home lies cyclically in (i, j]. */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			map->ids[i] = map->ids[j];
			map->values[i] = map->values[j];
			i = j;
		}
	}
	map->ids[i] = 0;
	map->values[i] = NULL;
	map->count--;
}
