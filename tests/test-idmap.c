/* Unit tests of the id map both programs keep their windows in. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "idmap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define IDS 5000

static void test_churn(void)
{
	/* Against a plain array, through growth and many removals, so that
	 * every shift of a probe run is exercised. */
	static void *model[IDS];
	struct idmap map;
	idmap_init(&map);
	uint64_t state = 42;
	for (int step = 0; step < 200000; step++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t id = (uint32_t)(state >> 33) % (IDS - 1) + 1;
		if ((state >> 20) % 3 == 0) {
			idmap_remove(&map, id);
			model[id] = NULL;
		} else {
			void *value = (void *)(uintptr_t)(state | 1);
			CHECK(idmap_put(&map, id, value));
			model[id] = value;
		}
		if (step % 1000 == 0) {
			uint32_t count = 0;
			for (uint32_t i = 1; i < IDS; i++) {
				CHECK(idmap_get(&map, i) == model[i]);
				count += model[i] != NULL;
			}
			CHECK(map.count == count);
		}
	}
	idmap_finish(&map);
}

static void test_zero(void)
{
	struct idmap map;
	idmap_init(&map);
	CHECK(idmap_get(&map, 7) == NULL);
	CHECK(!idmap_put(&map, 0, &map));
	CHECK(idmap_get(&map, 0) == NULL);
	idmap_remove(&map, 3); /* absent: nothing happens */
	CHECK(idmap_put(&map, 3, &map) && idmap_get(&map, 3) == &map);
	idmap_finish(&map);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"churn", test_churn},
		{"zero", test_zero},
	};
	return check_main(argc, argv, cases, N(cases));
}
