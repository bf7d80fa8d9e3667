/* The [room] settings for tests that compile room sources without
 * room_registry.c: all off (send_side_bwe off: receiver reports decide). */
#include "room.h"

room_settings room_config;
