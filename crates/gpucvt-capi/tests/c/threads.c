/* One form shared by four threads evaluating concurrently gives what one thread gives: run
 * by the test `programs::threads`. */
#include "gpucvt.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { N = 20000, THREADS = 4 };

static const gpucvt_form *form;
static uint64_t ops[N][5];
static gpucvt_u128 alone[N];
static uint32_t alone_flags[N];

struct job { gpucvt_u128 out[N]; uint32_t flags[N]; int status; };
static struct job jobs[THREADS];

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
}

static void *work(void *arg) {
    struct job *j = arg;
    /* The lanes API for half of the rows, one lane at a time for the other half. */
    for (int i = 0; i < N; i += 32) {
        if ((i / 32) % 2) {
            int s = gpucvt_form_eval_lanes(form, 32, UINT64_C(0xffffffff), &ops[i][0], 5, &j->out[i], &j->flags[i], NULL);
            if (s) j->status = s;
        } else {
            for (int k = i; k < i + 32; k++) {
                int s = gpucvt_form_eval(form, ops[k], 5, &j->out[k], &j->flags[k]);
                if (s) j->status = s;
            }
        }
    }
    return NULL;
}

int main(void) {
    const char *text = "cvt.rs.satfinite.e4m3x4.f32";
    gpucvt_form *f = NULL;
    if (gpucvt_form_parse(text, strlen(text), NULL, &f, NULL)) return 1;
    form = f;
    uint64_t seed = 44;
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 5; k++) ops[i][k] = next(&seed) & 0xffffffff;
    for (int i = 0; i < N; i++)
        if (gpucvt_form_eval(form, ops[i], 5, &alone[i], &alone_flags[i])) return 1;
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++) pthread_create(&t[k], NULL, work, &jobs[k]);
    for (int k = 0; k < THREADS; k++) pthread_join(t[k], NULL);
    int bad = 0;
    for (int k = 0; k < THREADS; k++) {
        if (jobs[k].status) bad++;
        for (int i = 0; i < N; i++)
            if (jobs[k].out[i].lo != alone[i].lo || jobs[k].out[i].hi != alone[i].hi || jobs[k].flags[i] != alone_flags[i]) bad++;
    }
    gpucvt_form_free(f);
    if (bad) {
        fprintf(stderr, "%d results differ from one thread's\n", bad);
        return 1;
    }
    printf("threads: %d threads x %d evaluations equal to one thread's\n", THREADS, N);
    return 0;
}
