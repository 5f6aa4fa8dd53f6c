/* Loads an .ossa clip, validates it (checksum included) and samples it through the C
 * ABI: prints the bone count and duration, then every bone's transform as f32 bits
 * (hex) at STEPS + 1 evenly spaced times, whole pose and bone by bone (they must agree).
 * Exit status 0 on success, 1 with a message on standard error otherwise.
 *
 *   cc sample.c -I ../include ../../target/release/libossa_c.a -lm -lpthread -ldl -o sample
 *   ./sample CLIP.ossa [STEPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ossa.h"

static unsigned bits(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int fail(const char *path, OssaStatus status) {
    fprintf(stderr, "sample: %s: %s\n", path, ossa_status_message(status));
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sample CLIP.ossa [STEPS]\n");
        return 1;
    }
    const char *path = argv[1];
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    if (steps < 1) steps = 1;

    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* The decoder reads the clip in place: 16-byte aligned, as the format requires. */
    size_t size = ((size_t)(len > 0 ? len : 0) + 15) / 16 * 16;
    unsigned char *bytes = aligned_alloc(16, size ? size : 16);
    if (!bytes || fread(bytes, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "sample: %s: cannot read\n", path);
        return 1;
    }
    fclose(f);

    OssaSampler sampler;
    OssaStatus status = ossa_sampler_init(&sampler, bytes, (size_t)len, true);
    if (status != OSSA_STATUS_OK) return fail(path, status);
    uint32_t bones = ossa_sampler_bone_count(&sampler);
    float duration = ossa_sampler_duration(&sampler);
    printf("bones %u duration %08x\n", bones, bits(duration));

    OssaTransform *pose = malloc(sizeof(OssaTransform) * (bones ? bones : 1));
    for (int k = 0; k <= steps; k++) {
        float time = duration * (float)k / (float)steps;
        status = ossa_sampler_seek(&sampler, time, OSSA_ROUNDING_NONE);
        if (status == OSSA_STATUS_OK) status = ossa_sampler_pose(&sampler, pose, bones);
        if (status != OSSA_STATUS_OK) return fail(path, status);
        for (uint32_t b = 0; b < bones; b++) {
            OssaTransform one;
            status = ossa_sampler_bone(&sampler, b, &one);
            if (status != OSSA_STATUS_OK) return fail(path, status);
            if (memcmp(&one, &pose[b], sizeof one) != 0) {
                fprintf(stderr, "sample: %s: bone %u alone differs from the pose\n", path, b);
                return 1;
            }
            const float *v = pose[b].rotation;
            printf("%08x %u:", bits(time), b);
            for (int i = 0; i < 4; i++) printf(" %08x", bits(v[i]));
            for (int i = 0; i < 3; i++) printf(" %08x", bits(pose[b].translation[i]));
            for (int i = 0; i < 3; i++) printf(" %08x", bits(pose[b].scale[i]));
            printf("\n");
        }
    }
    /* What the ABI refuses, refused by code: a short output and a bone out of range. */
    if (bones > 0 && ossa_sampler_pose(&sampler, pose, bones - 1) != OSSA_STATUS_OUTPUT_TOO_SMALL) return 1;
    if (ossa_sampler_bone(&sampler, bones, pose) != OSSA_STATUS_BONE_OUT_OF_RANGE) return 1;
    free(pose);
    free(bytes);
    return 0;
}
