/* SPDX-License-Identifier: MIT */
/*
 * The reason behind a failing public call, for ucmd_last_error()
 * (include/ucmd/ucmd.h): one sentence per thread, like errno, set where the
 * failure is understood best and read by the caller after the call.
 */
#ifndef UCMD_ERROR_ERROR_H
#define UCMD_ERROR_ERROR_H

#define LAST_ERROR_MAX 512

/*
 * Set the calling thread's reason to the formatted sentence, or, with fmt
 * NULL or an empty result, to strerror(-err). Returns err, so that a
 * failure path can `return last_error_set(-EINVAL, "...")`.
 */
int last_error_set(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set it only when nothing was set since the last last_error_clear(). */
int last_error_default(int err, const char *what);
void last_error_clear(void);

#endif
