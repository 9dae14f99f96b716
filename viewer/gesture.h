/*
 * The local touchpad's gestures (zwp_pointer_gestures_v1 on the local
 * desktop): swipes, pinches and holds over a window go to the session
 * (gesture), whose app under the pointer gets them.
 */
#ifndef RV_GESTURE_H
#define RV_GESTURE_H

#include "viewer.h"

void gesture_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name,
	uint32_t version);
/* The local pointer came (or the manager did): its gestures are listened to. */
void gesture_pointer(struct rv_viewer *viewer);
/* The local pointer goes. */
void gesture_pointer_gone(struct rv_viewer *viewer);
/* The viewer ends: the gestures and their manager go. */
void gesture_finish(struct rv_viewer *viewer);

#endif
