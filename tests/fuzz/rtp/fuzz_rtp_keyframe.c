/* libFuzzer target for keyframe detection (rtp/rtp_keyframe.h): the first
 * byte picks the codec, the rest is the payload. Invariants: no read past
 * the payload (ASan), a size is only reported for a keyframe, and the
 * answer does not depend on bytes past the payload. */
#include <stdlib.h>
#include <string.h>

#include "rtp/rtp_keyframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    moat_video_codec codec = (moat_video_codec)(data[0] % 4);
    size_t length = size - 1;
    /* An exact-size copy so ASan sees any overread. */
    uint8_t *payload = malloc(length ? length : 1);
    if (!payload)
        return 0;
    memcpy(payload, data + 1, length);
    moat_keyframe_info info;
    bool key = moat_rtp_keyframe(codec, payload, length, &info);
    if (key != info.keyframe || (!key && (info.width || info.height)))
        abort();
    free(payload);
    return 0;
}
