/* libFuzzer target: DCEP messages (RFC 8832) as a peer would send them.
 * Whatever parses must convert or be refused cleanly, and an accepted OPEN
 * must survive build -> parse unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sctp/dcep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so reading past the end is caught. */
    uint8_t *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL)
        return 0;
    if (size > 0)
        memcpy(copy, data, size);
    moat_dcep_message message;
    if (moat_dcep_parse(copy, size, &message) != 0 || message.type != MOAT_DCEP_OPEN) {
        free(copy);
        return 0;
    }
    moat_data_channel_info info;
    if (moat_dcep_open_to_info(&message, 1, &info) == 0) {
        if (moat_data_channel_info_check(&info) != 0)
            abort();
        uint8_t built[MOAT_DCEP_OPEN_HEADER_SIZE + 2 * MOAT_DATA_CHANNEL_NAME_SIZE];
        size_t length = moat_dcep_build_open(&info, built, sizeof built);
        if (length == 0 || length != moat_dcep_open_length(&info))
            abort();
        moat_dcep_message again;
        moat_data_channel_info info_again;
        if (moat_dcep_parse(built, length, &again) != 0 ||
            moat_dcep_open_to_info(&again, 1, &info_again) != 0)
            abort();
        if (strcmp(info.label, info_again.label) != 0 ||
            strcmp(info.protocol, info_again.protocol) != 0 || info.ordered != info_again.ordered ||
            info.max_retransmits != info_again.max_retransmits ||
            info.max_lifetime_ms != info_again.max_lifetime_ms)
            abort();
    }
    free(copy);
    return 0;
}
