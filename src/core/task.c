/* SPDX-License-Identifier: MIT */
/* The current task: whom the calling thread acts for (Linux's current). */
#include "core/task.h"

const struct ucmd_task init_task = { .mm = &user_mm_self };

static __thread const struct ucmd_task *task_override;

const struct ucmd_task *current_task(void)
{
	return task_override ? task_override : &init_task;
}

void task_override_set(const struct ucmd_task *t)
{
	task_override = t;
	cred_override_set(t ? t->cred : NULL);
}
