/* Loads an .ossa clip, validates it (checksum included) and samples it through the C
 * ABI: prints the bone count and duration, then every bone's transform as f32 bits
 * (hex) at STEPS + 1 evenly spaced times, whole pose, kept pose (with and without a
 * plan), pose with a static pose, bone by bone and a planned subset of up to
 * OSSA_SUBSET_BONES bones (they must agree).
 * With a streaming database (.ossadb), the clip is opened in it and sampled with the
 * chunks of the tiers FIDELITY asks for resident (highest: both tiers, the default;
 * medium: the medium tier; lowest: none), each chunk read from the file and checked
 * against its checksum.
 * Exit status 0 on success, 1 with a message on standard error otherwise.
 *
 *   cc sample.c -I ../include ../../target/release/libossa_c.a -lm -lpthread -ldl -o sample
 *   ./sample CLIP.ossa [STEPS [DATABASE.ossadb [highest|medium|lowest]]]
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

/* The whole file at `path` in 16-byte aligned memory (the decoder reads in place), its
 * length in `*len`; NULL when it cannot be read. */
static unsigned char *read_aligned(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t size = ((size_t)(n > 0 ? n : 0) + 15) / 16 * 16;
    unsigned char *bytes = aligned_alloc(16, size ? size : 16);
    if (!bytes || n < 0 || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        free(bytes);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return bytes;
}

/* Makes every chunk of `tier` in the database file `file` resident in `residency`,
 * after checking it against the index's checksum. */
static OssaStatus bind_tier(OssaResidency *residency, const OssaDatabase *database, const unsigned char *file,
                            size_t file_len, OssaTier tier) {
    uint32_t count = ossa_database_chunk_count(database, tier);
    for (uint32_t i = 0; i < count; i++) {
        OssaChunk chunk;
        OssaStatus status = ossa_database_chunk(database, tier, i, &chunk);
        if (status != OSSA_STATUS_OK) return status;
        if (chunk.file_offset > file_len || chunk.size > file_len - chunk.file_offset) return OSSA_STATUS_CHUNK_TOO_SHORT;
        const unsigned char *bytes = file + chunk.file_offset;
        status = ossa_database_verify_chunk(database, tier, i, bytes, chunk.size);
        if (status == OSSA_STATUS_OK) status = ossa_residency_bind(residency, database, tier, i, bytes, chunk.size);
        if (status != OSSA_STATUS_OK) return status;
    }
    return OSSA_STATUS_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sample CLIP.ossa [STEPS [DATABASE.ossadb [highest|medium|lowest]]]\n");
        return 1;
    }
    const char *path = argv[1];
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    if (steps < 1) steps = 1;
    const char *database_path = argc > 3 ? argv[3] : NULL;
    const char *fidelity = argc > 4 ? argv[4] : "highest";
    if (strcmp(fidelity, "highest") != 0 && strcmp(fidelity, "medium") != 0 && strcmp(fidelity, "lowest") != 0) {
        fprintf(stderr, "sample: fidelity '%s': highest, medium or lowest\n", fidelity);
        return 1;
    }

    size_t len = 0;
    unsigned char *bytes = read_aligned(path, &len);
    if (!bytes) {
        fprintf(stderr, "sample: %s: cannot read\n", path);
        return 1;
    }

    OssaSampler sampler;
    OssaStatus status;
    /* With a database: its index validated once, a residency over slots of our own,
     * the chosen tiers' chunks bound, and the clip opened in the database. */
    unsigned char *database_file = NULL;
    OssaChunkSlot *slots = NULL;
    OssaDatabase database;
    OssaResidency residency;
    if (database_path) {
        size_t database_len = 0;
        database_file = read_aligned(database_path, &database_len);
        if (!database_file) {
            fprintf(stderr, "sample: %s: cannot read\n", database_path);
            return 1;
        }
        status = ossa_database_init(&database, database_file, database_len, true);
        if (status != OSSA_STATUS_OK) return fail(database_path, status);
        uint32_t slot_count = ossa_database_chunk_slots(&database);
        slots = malloc(sizeof(OssaChunkSlot) * (slot_count ? slot_count : 1));
        status = ossa_residency_init(&residency, &database, slots, slot_count);
        if (status == OSSA_STATUS_OK && strcmp(fidelity, "lowest") != 0)
            status = bind_tier(&residency, &database, database_file, database_len, OSSA_TIER_MEDIUM);
        if (status == OSSA_STATUS_OK && strcmp(fidelity, "highest") == 0)
            status = bind_tier(&residency, &database, database_file, database_len, OSSA_TIER_LOW);
        if (status != OSSA_STATUS_OK) return fail(database_path, status);
        status = ossa_sampler_init_in_database(&sampler, &database, bytes, len, true);
    } else {
        status = ossa_sampler_init(&sampler, bytes, len, true);
    }
    if (status != OSSA_STATUS_OK) return fail(path, status);
    uint32_t bones = ossa_sampler_bone_count(&sampler);
    float duration = ossa_sampler_duration(&sampler);
    printf("bones %u duration %08x\n", bones, bits(duration));

    OssaTransform *pose = malloc(sizeof(OssaTransform) * (bones ? bones : 1));
    /* A pose kept between calls: after the first, only what moves is written. */
    OssaTransform *kept_pose = malloc(sizeof(OssaTransform) * (bones ? bones : 1));
    OssaKeptPose kept;
    if (ossa_kept_pose_init(&kept) != OSSA_STATUS_OK) return 1;
    /* Another, with a plan: what the keys' segment gives each quad of moving
     * sub-tracks, kept in an array of ours (zeroed; malloc's memory is on a 16-byte
     * boundary). */
    size_t quads = ossa_sampler_quad_count(&sampler);
    OssaQuadPlan *plan = calloc(quads ? quads : 1, sizeof(OssaQuadPlan));
    OssaTransform *planned_pose = malloc(sizeof(OssaTransform) * (bones ? bones : 1));
    OssaKeptPose planned;
    if (ossa_kept_pose_init(&planned) != OSSA_STATUS_OK) return 1;
    /* A copy of the sampler that copies the clip's static parts from an array of
     * ours instead of decoding them (malloc's memory is on a 16-byte boundary). */
    OssaSampler fixed = sampler;
    OssaTransform *statics = malloc(sizeof(OssaTransform) * (bones ? bones : 1));
    OssaTransform *fixed_pose = malloc(sizeof(OssaTransform) * (bones ? bones : 1));
    status = ossa_sampler_use_static_pose(&fixed, statics, bones);
    if (status != OSSA_STATUS_OK) return fail(path, status);
    /* A subset: up to OSSA_SUBSET_BONES bones spread over the skeleton, planned once
     * (the plan is about 15 KB, on a 16-byte boundary). */
    uint32_t subset_bones[OSSA_SUBSET_BONES];
    size_t subset_count = 0;
    for (uint32_t i = 0; i < OSSA_SUBSET_BONES && i < bones; i++) {
        uint32_t b = bones <= OSSA_SUBSET_BONES ? i : (uint32_t)((uint64_t)i * (bones - 1) / (OSSA_SUBSET_BONES - 1));
        if (subset_count == 0 || subset_bones[subset_count - 1] < b) subset_bones[subset_count++] = b;
    }
    OssaSubset *subset = aligned_alloc(16, sizeof(OssaSubset));
    if (!subset) return 1;
    status = ossa_subset_init(subset, &sampler, subset_bones, subset_count);
    if (status != OSSA_STATUS_OK) return fail(path, status);
    OssaTransform subset_pose[OSSA_SUBSET_BONES];
    /* The values of a transform, without its padding (zero, but not part of the value). */
    const size_t value_bytes = offsetof(OssaTransform, reserved);
    for (int k = 0; k <= steps; k++) {
        float time = duration * (float)k / (float)steps;
        status = database_path ? ossa_sampler_seek_streamed(&sampler, time, OSSA_ROUNDING_NONE, &residency)
                               : ossa_sampler_seek(&sampler, time, OSSA_ROUNDING_NONE);
        if (status == OSSA_STATUS_OK) status = ossa_sampler_pose(&sampler, pose, bones);
        if (status == OSSA_STATUS_OK) status = ossa_sampler_kept_pose(&sampler, &kept, kept_pose, bones);
        if (status == OSSA_STATUS_OK)
            status = ossa_sampler_kept_pose_planned(&sampler, &planned, planned_pose, bones, plan, quads);
        if (status == OSSA_STATUS_OK)
            status = database_path ? ossa_sampler_seek_streamed(&fixed, time, OSSA_ROUNDING_NONE, &residency)
                                   : ossa_sampler_seek(&fixed, time, OSSA_ROUNDING_NONE);
        if (status == OSSA_STATUS_OK) status = ossa_sampler_pose(&fixed, fixed_pose, bones);
        if (status == OSSA_STATUS_OK) status = ossa_sampler_subset(&sampler, subset, subset_pose, subset_count);
        if (status != OSSA_STATUS_OK) return fail(path, status);
        for (size_t i = 0; i < subset_count; i++) {
            if (memcmp(&subset_pose[i], &pose[subset_bones[i]], value_bytes) != 0) {
                fprintf(stderr, "sample: %s: bone %u of the subset differs from the pose\n", path, subset_bones[i]);
                return 1;
            }
        }
        for (uint32_t b = 0; b < bones; b++) {
            if (memcmp(&kept_pose[b], &pose[b], value_bytes) != 0) {
                fprintf(stderr, "sample: %s: bone %u of the kept pose differs from the pose\n", path, b);
                return 1;
            }
            if (memcmp(&planned_pose[b], &pose[b], value_bytes) != 0) {
                fprintf(stderr, "sample: %s: bone %u of the planned pose differs from the pose\n", path, b);
                return 1;
            }
            if (memcmp(&fixed_pose[b], &pose[b], value_bytes) != 0) {
                fprintf(stderr, "sample: %s: bone %u with a static pose differs from the pose\n", path, b);
                return 1;
            }
            OssaTransform one;
            status = ossa_sampler_bone(&sampler, b, &one);
            if (status != OSSA_STATUS_OK) return fail(path, status);
            if (memcmp(&one, &pose[b], value_bytes) != 0) {
                fprintf(stderr, "sample: %s: bone %u alone differs from the pose\n", path, b);
                return 1;
            }
            /* The bone and the first, listed together. */
            const uint32_t listed[2] = {b, 0};
            OssaTransform two[2];
            status = ossa_sampler_bones(&sampler, listed, 2, two, 2);
            if (status != OSSA_STATUS_OK) return fail(path, status);
            if (memcmp(&two[0], &pose[b], value_bytes) != 0 || memcmp(&two[1], &pose[0], value_bytes) != 0) {
                fprintf(stderr, "sample: %s: bones %u and 0 listed differ from the pose\n", path, b);
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
    free(kept_pose);
    free(planned_pose);
    free(plan);
    free(subset);
    free(fixed_pose);
    free(statics);
    free(slots);
    free(database_file);
    free(bytes);
    return 0;
}
