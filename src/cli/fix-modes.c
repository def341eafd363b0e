/* SPDX-License-Identifier: MIT */
/*
 * --fix-plan (its text or JSON, --diff, --write) and --wrap-plan, printed instead of the
 * report. The plans and the verification of a written fix are the fix layer's
 * (include/dtypelint/fix/fix.h); this file says what they found.
 */
#include <errno.h>
#include <string.h>

#include "cli-run.h"
#include "dtypelint/fix/fix.h"

/* The files --write may edit for a job: its own */
static struct dtl_fix_files fix_files_of(const struct dtl_lint_job *job)
{
	return (struct dtl_fix_files){.input = job->input,
	                              .plan_file = job->plan_file,
	                              .deepspeed_file = job->deepspeed_file,
	                              .accelerate_file = job->accelerate_file,
	                              .peft_file = job->peft_file,
	                              .trainer_args_file = job->trainer_args_file};
}

/* The finding of input i whose fixes --write takes: the most severe with a proven fix. Returns
 * its index in plan, or plan->count after saying that none has one. */
static size_t finding_to_fix(const struct dtl_options *o, size_t i, const struct dtl_fix_plan *plan)
{
	size_t best = plan->count;

	for (size_t k = 0; k < plan->count; k++)
		if (plan->items[k].count &&
		    (best == plan->count ||
		     plan->items[k].finding->severity > plan->items[best].finding->severity))
			best = k;
	if (best == plan->count) {
		fputs("dtypelint: no finding of ", stderr);
		dtl_report_put_path(stderr, o->inputs[i]);
		fputs(" has a fix dtypelint can prove\n", stderr);
	}
	return best;
}

/* The edit of the first fix of item (or the --pick one) that a file of the input can hold;
 * code changes are said and skipped. Returns 0 with *ret_edit and *ret_fix set, else a
 * negative errno after saying why, its status noted. */
static int edit_for(struct dtl_cli_run *run, size_t i, const struct dtl_fix_item *item,
                    struct dtl_fix_edit *ret_edit, const struct dtl_fix **ret_fix)
{
	const struct dtl_options *o = run->o;
	const struct dtl_lint_result *res = &run->results[i];
	struct dtl_fix_files files = fix_files_of(&o->jobs[i]);
	struct dtl_error error = {0};
	size_t k = o->fix_pick ? (size_t)o->fix_pick - 1 : 0;
	int r = -ENOTSUP;

	if ((size_t)o->fix_pick > item->count) {
		fprintf(stderr, "dtypelint: --pick %d: the finding has %zu fix%s\n", o->fix_pick,
		        item->count, item->count == 1 ? "" : "es");
		return dtl_cli_note(run, DTL_EXIT_INPUT, -EINVAL);
	}
	for (; k < item->count; k++) {
		*ret_fix = &item->fixes[k];
		r = dtl_fix_edit_build(*ret_fix, &files, res->manifest, res->plan, run->arena,
		                       ret_edit, &error);
		if (r != -ENOTSUP)
			break;
		/* a code change: said, never written */
		fprintf(stderr, "dtypelint: fix %zu is not written: ", k + 1);
		dtl_report_put_escaped(stderr, error.message);
		fputc('\n', stderr);
		if (o->fix_pick)
			return dtl_cli_note(run, DTL_EXIT_INPUT, r);
	}
	if (r == -ENOTSUP) {
		fputs("dtypelint: no fix of this finding can be written into the files of ",
		      stderr);
		dtl_report_put_path(stderr, o->inputs[i]);
		fputc('\n', stderr);
		return dtl_cli_note(run, DTL_EXIT_INPUT, r);
	}
	return r < 0 ? dtl_cli_fail(run, &error, r) : 0;
}

/* Writes the edit: confined to the tree, and exit 3 for a write that failed or a file that
 * changed meanwhile, as every write error; a refusal (a hard-linked file) is the input's, 2
 * (README, Exit status) */
static int commit_edit(struct dtl_cli_run *run, const struct dtl_fix_edit *edit,
                       const struct dtl_fix *fix)
{
	struct dtl_error error = {0};
	int r;

	/* a path typed or named may reach outside the tree; an edit never does (issue 35) */
	if ((r = dtl_confine_tree(edit->path, (struct dtl_loc){0}, &error)) < 0)
		return dtl_cli_fail(run, &error, r);
	if ((r = dtl_fix_edit_commit(edit, &error)) < 0)
		return dtl_cli_note(run, r == -EPERM ? DTL_EXIT_INPUT : DTL_EXIT_INTERNAL,
		                    dtl_cli_fail(run, &error, r));
	if (dtl_fix_edit_diff(stdout, edit) < 0)
		return dtl_cli_note(run, DTL_EXIT_INTERNAL, -EIO);
	if (!run->o->quiet) {
		fputs("dtypelint: applied to ", stderr);
		dtl_report_put_path(stderr, edit->path);
		fputs(" (", stderr);
		dtl_report_put_escaped(stderr, edit->setting);
		fputs("): ", stderr);
		dtl_report_put_escaped(stderr, fix->proposed.title);
		fputc('\n', stderr);
	}
	return 0;
}

/* What linting input i again after its edit says: the finding gone (0) or still reported
 * (1), and the findings the edit brought at --fail-on (1) */
static int say_verdict(struct dtl_cli_run *run, size_t i, const struct dtl_finding *target,
                       const struct dtl_fix_verdict *v)
{
	if (v->still) {
		fprintf(stderr, "dtypelint: re-run: %s %s is still reported: ", target->rule->id,
		        target->rule->name);
		dtl_report_put_escaped(stderr, v->still->message);
		fputc('\n', stderr);
		return dtl_cli_note(run, DTL_EXIT_FINDINGS, 0);
	}
	fprintf(stderr, "dtypelint: re-run: %s %s is gone from ", target->rule->id,
	        target->rule->name);
	dtl_report_put_path(stderr, run->o->inputs[i]);
	fputc('\n', stderr);
	for (size_t n = 0; n < v->brought_count; n++) {
		fprintf(stderr,
		        "dtypelint: re-run: the edit brings %s %s: ", v->brought[n]->rule->id,
		        v->brought[n]->rule->name);
		dtl_report_put_escaped(stderr, v->brought[n]->message);
		fputc('\n', stderr);
		dtl_cli_note(run, DTL_EXIT_FINDINGS, 0);
	}
	return 0;
}

/* --fix-plan --diff / --write for input i: the first of its most severe findings with a proven
 * fix, and of its fixes the first one a file of the input can hold (or the --pick N-th); the
 * others are code changes, printed as such. --write edits that file, lints the input again and
 * says whether the finding is gone (exit 0) or still reported (exit 1), and names findings the
 * edit brought (exit 1 when they reach --fail-on). */
static int write_fix(struct dtl_cli_run *run, size_t i, const struct dtl_fix_plan *plan)
{
	struct dtl_error error = {0};
	struct dtl_fix_edit edit;
	struct dtl_fix_verdict verdict;
	const struct dtl_fix *fix = NULL;
	size_t best = finding_to_fix(run->o, i, plan);
	int r;

	if (best == plan->count)
		return dtl_cli_note(run, DTL_EXIT_INPUT, -ENOENT);
	const struct dtl_fix_item *item = &plan->items[best];
	if ((r = edit_for(run, i, item, &edit, &fix)) < 0)
		return r;
	if (run->o->fix_diff)
		return dtl_fix_edit_diff(stdout, &edit) < 0
		           ? dtl_cli_note(run, DTL_EXIT_INTERNAL, -EIO)
		           : 0;
	if ((r = commit_edit(run, &edit, fix)) < 0)
		return r;
	/* lint the input again, from the edited files */
	r = dtl_fix_verify(&run->o->jobs[i], &run->settings[i], &run->results[i], item->finding,
	                   run->arena, &verdict, &error);
	dtl_cli_put_input_warnings(verdict.again.warnings);
	if (r < 0)
		return dtl_cli_fail(run, &error, r);
	return say_verdict(run, i, item->finding, &verdict);
}

/* Says of each fix where --write would put it, or that it is a code change */
static void say_where(struct dtl_cli_run *run, size_t i, struct dtl_fix_plan *plan)
{
	const struct dtl_lint_result *res = &run->results[i];
	struct dtl_fix_files files = fix_files_of(&run->o->jobs[i]);

	for (size_t k = 0; k < plan->count; k++)
		for (size_t n = 0; n < plan->items[k].count; n++) {
			struct dtl_fix *fix = &plan->items[k].fixes[n];
			struct dtl_fix_edit edit;
			struct dtl_error why = {0};
			if (dtl_fix_edit_build(fix, &files, res->manifest, res->plan, run->arena,
			                       &edit, &why) >= 0) {
				fix->edit_file = edit.path;
				fix->edit_setting = edit.setting;
			} else {
				fix->not_written =
				    dtl_arena_strndup(run->arena, why.message, strlen(why.message));
			}
		}
}

/* Input i's fix plan: every finding's candidates, re-simulated and ranked */
static int build_plan(struct dtl_cli_run *run, size_t i, struct dtl_fix_plan *plan,
                      struct dtl_error *error)
{
	const struct dtl_lint_result *res = &run->results[i];
	struct dtl_fix_context ctx = {.manifest = res->manifest,
	                              .plan = res->plan,
	                              .behaviors = run->lint.behaviors,
	                              .selection = &run->settings[i].selection,
	                              .ops = run->lint.ops,
	                              .arena = run->arena};

	return dtl_fix_plan_build(&ctx, res->sim, res->findings, plan, error);
}

/* Input i's fix plan printed, or its fix shown (--diff) or written (--write), whose outcome
 * is noted and lets the next input go on. Returns 0 or -EIO (standard output failed). */
static int use_plan(struct dtl_cli_run *run, size_t i, struct dtl_fix_plan *plan)
{
	if (run->o->fix_write || run->o->fix_diff) {
		write_fix(run, i, plan);
		return 0;
	}
	say_where(run, i, plan);
	if (run->o->format == DTL_FORMAT_JSON)
		return dtl_fix_plan_write_json(stdout, plan, run->results[i].sim) < 0 ? -EIO : 0;
	return dtl_fix_plan_write_text(stdout, plan) < 0 ? -EIO : 0;
}

int dtl_cli_fix_modes(struct dtl_cli_run *run)
{
	struct dtl_error error = {0};
	struct dtl_fix_plan plan;
	int r = 0;

	for (size_t i = 0; i < run->o->input_count && r >= 0; i++) {
		if (run->o->wrap_plan)
			r = dtl_wrap_plan_write(stdout, run->results[i].sim,
			                        run->o->format == DTL_FORMAT_JSON, &error);
		else if ((r = build_plan(run, i, &plan, &error)) >= 0)
			r = use_plan(run, i, &plan);
		else
			return dtl_cli_fail(run, &error, r);
		if (r < 0 && run->o->wrap_plan)
			return dtl_cli_fail(run, &error, r);
	}
	/* what stdout could not take (/dev/full, a closed pipe) is a failed write, exit 3 */
	if (r >= 0 && (fflush(stdout) != 0 || ferror(stdout)))
		r = -EIO;
	if (r < 0) {
		fprintf(stderr, "dtypelint: cannot write the plan to standard output\n");
		return dtl_cli_note(run, DTL_EXIT_INTERNAL, r);
	}
	return 0;
}
