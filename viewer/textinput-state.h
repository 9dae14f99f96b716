/*
 * What rcomp-view keeps of the local text input (textinput.h): types only,
 * for viewer.h.
 */
#ifndef RCOMP_TEXTINPUT_STATE_H
#define RCOMP_TEXTINPUT_STATE_H

#include <stdbool.h>
#include <stdint.h>

struct rv_window;
struct zwp_text_input_manager_v3;
struct zwp_text_input_v3;

/* The local text input (textinput.c): what the local input method sends
 * until its done. */
struct rv_text_input {
	struct zwp_text_input_manager_v3 *manager;
	struct zwp_text_input_v3 *input;
	struct rv_window *entered; /* the window whose surface it is on */
	bool enabled; /* enable was sent for it */
	char *preedit, *commit;
	bool has_preedit;
	int32_t preedit_begin, preedit_end;
	uint32_t delete_before, delete_after;
};

#endif
