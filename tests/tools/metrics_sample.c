/*
 * metrics_sample.c - prints the exposition of `gpuprio metrics` (tools/metrics_format.c) for a
 * made-up sample of rows that no live board can hold today, for metrics.sh to compare with
 * metrics_sample.prom and to parse: label values with a newline, a quote and a backslash (a
 * command name cannot hold a newline on a board, which reads it from /proc, but the format must
 * escape one wherever it comes from), bytes that are not UTF-8 (cut, overlong, a surrogate) next
 * to valid multi-byte characters, a per-thread queue, counters at 2^64-1, seconds from
 * nanoseconds and from microseconds (a queue's longest command, at most the most a reader takes,
 * and none for the queues that have none), a user without a name, every decision and both levels,
 * and a duplicate row and record (a process's image after exec, for a moment) that must give one
 * series each.
 *
 *   tools_metrics_sample    (no arguments; the exposition on standard output)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "tool.h"

static struct gp_slot_id id(const char *key, uint32_t pid, const char *comm, uint32_t uid,
                            int32_t device)
{
    struct gp_slot_id i;
    memset(&i, 0, sizeof i);
    snprintf(i.key, sizeof i.key, "%s", key);
    snprintf(i.comm, sizeof i.comm, "%s", comm);
    i.pid = pid;
    i.uid = uid;
    i.device = device;
    return i;
}

int main(void)
{
    static const char odd_key[] = "sim:\"odd\"\\key\n2";
    /* a cut two-byte character, e with acute, a surrogate, an overlong '/', one CJK character */
    static const char odd_comm[] = "\xc3"
                                   "x\xc3\xa9\xed\xa0\x80\xc0\xaf\xe6\x97\xa5";
    struct gp_queue_row rows[5];
    memset(rows, 0, sizeof rows);
    /* Sorted as gp_sample_take sorts: device, priority (highest first), pid, stream, thread. */
    rows[0].id = id("0000:c1:00.0", 4242, "python", 0, 1);
    rows[0].stream = 0x55d0c3a41230;
    rows[0].priority = 20;
    rows[0].active = true;
    rows[0].gate = XQ_GATE_TRACKED | 3;
    rows[0].submitted = UINT64_MAX;
    rows[0].completed = UINT64_MAX - 3;
    rows[1].id = id("0000:c1:00.0", 4250, "a\"b\\c\nd", 4000000000u, 0);
    rows[1].thread = 140737;
    rows[1].priority = -10;
    rows[1].gate = XQ_GATE_SUSPENDED | XQ_GATE_DEVICE;
    rows[1].submitted = 10;
    rows[1].completed = 10;
    rows[1].held_ns = 1234567890123;
    rows[1].suspensions = 7;
    rows[1].longest_us = 4400; /* its longest command: 4.4 ms */
    rows[2] = rows[1];
    rows[2].id.slot = 9;        /* another slot, the same labels: left out */
    rows[2].submitted = 999999; /* so that the golden file shows which one is kept */
    rows[3].id = id(odd_key, 7, odd_comm, 0, 0);
    rows[3].stream = 0x1;
    rows[3].gate = XQ_GATE_THROTTLED;
    rows[3].held_ns = 999999999;
    rows[3].longest_us = GP_SLOT_LONGEST_MAX_US; /* the most a reader takes */
    rows[4].id = id(odd_key, 8, "idle", 0, 0);
    rows[4].stream = 0x2;
    rows[4].priority = -5; /* gate 0: decision none */
    struct gp_record_row records[4];
    memset(records, 0, sizeof records);
    records[0].id = rows[0].id;
    records[0].unused_queues = 142;
    records[0].unslotted_queues = 89;
    records[1].id = rows[1].id;
    records[2].id = rows[1].id;
    records[2].unused_queues = 5; /* a duplicate: left out */
    records[3].id = rows[3].id;
    records[3].unused_queues = 1;
    records[0].gemm_sliced = 3; /* GEMM counts, one of them at the most a reader takes */
    records[0].gemm_slices = 12;
    records[0].gemm_whole[GP_RECORD_GEMM_UNSUPPORTED] = 7;
    records[3].gemm_whole[GP_RECORD_GEMM_CAPTURING] = UINT32_MAX;
    records[3].gemm_slices = GP_RECORD_GEMM_MAX;
    struct gp_sample s = {.rows = rows, .n = 5, .records = records, .nrec = 4, .boards = 2};
    gp_metrics_write(stdout, &s);
    return fflush(stdout) == 0 ? 0 : 1;
}
