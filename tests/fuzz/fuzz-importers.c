/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the importers' own code (include/dtypelint/model/import.h), the DeepSpeed JSON, the
 * accelerate YAML, the PEFT adapter_config.json and the trainer-argument YAML, as
 * dtl_compose() runs them on top of a manifest; then, when the input asks for it, the
 * simulation, every rule and both reports on the result, in dtl_lint_run()'s order.
 *
 * The importers take a path, so the bytes go to files in a private directory made once per
 * process (mkdtemp in $TMPDIR, or /tmp when it is unset; removed at exit):
 *
 *   byte 0, bits 0-1   the importer: 0 DeepSpeed, 1 accelerate, 2 PEFT, 3 trainer arguments
 *           bits 2-3   the file's name: 0 its usual extension (.json for DeepSpeed and PEFT,
 *                      .yaml for accelerate and trainer arguments), 1 the other one, 2 and 3
 *                      none (the reader sniffs JSON by a leading '{' or '[')
 *           bit 4      the rest is split at its first NUL byte: the part before it is the
 *                      file, the part after it is "ds.json" beside it, for the
 *                      `deepspeed_config_file:` of an accelerate config and the `deepspeed:`
 *                      of trainer arguments to point at (without the bit, ds.json is empty)
 *           bit 5      simulate, run the rules and write the reports when the import succeeds
 *   the rest           the file
 *
 * Every name the target can give is always there (empty when not chosen), so an input reads
 * the same files whatever ran before it. Inputs that name "dev/", "proc/" or "sys/" are
 * skipped: what the reader does with devices and pseudo-files is special-files.sh's business,
 * and a read of /dev/kmsg would block the fuzzer.
 *
 * The promise checked is issue 7's (dtl_fuzz_check_error()), with one exception: a file an
 * imported file points at (a deepspeed_config_file that is missing, a directory, over the size
 * limit) is refused as a whole, at line 0 of that file, like a missing file on the command
 * line. The importers pass the error of dtl_source_read() through unchanged; the file it names
 * is then never the imported file itself, which always exists and is readable.
 */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "dtypelint/cli/dtypelint.h"
#include "dtypelint/model/import.h"
#include "dtypelint/report/report.h"
#include "fuzz.h"
#include "model/load.h"

/* The manifest the importers' plan and adapter go on top of: a small Qwen2 with versions, so
 * the simulation has tensors, LoRA targets and layer classes to work on. */
static const char base_manifest[] =
    "dtypelint: 1\n"
    "model: {architecture: Qwen2ForCausalLM, checkpoint_dtype: bfloat16, hidden_size: 64}\n"
    "tensors:\n"
    "  - {name: model.embed_tokens.weight, shape: [1000, 64]}\n"
    "  - {name: model.layers.0.input_layernorm.weight, shape: [64]}\n"
    "  - {name: model.layers.0.self_attn.q_proj.weight, shape: [64, 64]}\n"
    "  - {name: model.layers.0.self_attn.v_proj.weight, shape: [16, 64]}\n"
    "  - {name: model.layers.0.mlp.down_proj.weight, shape: [64, 128]}\n"
    "  - {name: model.layers.0.post_attention_layernorm.weight, shape: [64]}\n"
    "  - {name: model.norm.weight, shape: [64]}\n"
    "  - {name: model.rotary_emb.inv_freq, kind: buffer, shape: [32], dtype: float32, "
    "persistent: false}\n"
    "  - {name: lm_head.weight, shape: [1000, 64]}\n"
    "training:\n"
    "  strategy: ddp\n"
    "  precision: bf16\n"
    "  world_size: 8\n"
    "  versions: {torch: \"2.7.1\", peft: \"0.17.1\", deepspeed: \"0.19.2\", "
    "transformers: \"4.57.0\"}\n";

enum { NAME_JSON, NAME_YAML, NAME_BARE, NAME_DS, NAME_COUNT };
static const char *const names[NAME_COUNT] = {"config.json", "config.yaml", "config", "ds.json"};

static struct {
	bool ready;
	char dir[PATH_MAX];
	char path[NAME_COUNT][PATH_MAX + 16];
	int fd[NAME_COUNT];
	size_t size[NAME_COUNT];
	struct dtl_arena arena; /* the base manifest and the version table */
	struct dtl_manifest base;
	struct dtl_behavior_table behaviors;
	FILE *sink;
} g;

static void cleanup(void)
{
	for (int i = 0; i < NAME_COUNT; i++) {
		close(g.fd[i]);
		unlink(g.path[i]);
	}
	rmdir(g.dir);
}

static void setup(void)
{
	struct dtl_source source;
	struct dtl_limits limits;
	struct dtl_error error = {0};
	const char *tmp = getenv("TMPDIR");

	snprintf(g.dir, sizeof(g.dir), "%s/dtl-fuzz-importers-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(g.dir))
		abort();
	for (int i = 0; i < NAME_COUNT; i++) {
		snprintf(g.path[i], sizeof(g.path[i]), "%s/%s", g.dir, names[i]);
		g.fd[i] = open(g.path[i], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (g.fd[i] < 0)
			abort();
	}
	atexit(cleanup);
	dtl_limits_default(&limits);
	dtl_arena_init(&g.arena);
	if (dtl_source_init_mem(&source, "base.yaml", base_manifest, sizeof(base_manifest) - 1) <
	        0 ||
	    dtl_manifest_load_source(&source, &g.arena, &limits, &g.base, &error) < 0 ||
	    dtl_behavior_table_load(&g.behaviors, &g.arena, &error) < 0) {
		fprintf(stderr, "fuzz-importers: %s\n", error.message);
		abort();
	}
	dtl_source_fini(&source);
	g.sink = fopen("/dev/null", "w");
	if (!g.sink)
		abort();
	g.ready = true;
}

/* The file's bytes are data[0, size); a file left from an earlier input is emptied. */
static void put(int i, const uint8_t *data, size_t size)
{
	if (size && pwrite(g.fd[i], data, size, 0) != (ssize_t)size)
		abort();
	if (size < g.size[i] && ftruncate(g.fd[i], (off_t)size) < 0)
		abort();
	g.size[i] = size;
}

static bool names_special(const uint8_t *data, size_t size)
{
	static const char *const special[] = {"dev/", "proc/", "sys/"};
	for (size_t i = 0; i < sizeof(special) / sizeof(*special); i++)
		if (memmem(data, size, special[i], strlen(special[i])))
			return true;
	return false;
}

/* dtl_fuzz_check_error(), but a file the imported one points at may be refused as a whole */
static void check_import_error(int r, const struct dtl_error *error, const char *path)
{
	if (r < 0 && r != -ENOMEM && error->loc.line == 0 && error->message[0] && error->loc.file &&
	    strcmp(error->loc.file, path) != 0)
		return;
	dtl_fuzz_check_error(r, error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dtl_rule_selection selection = {0};
	struct dtl_findings findings = {0};
	struct dtl_manifest manifest;
	struct dtl_limits limits;
	struct dtl_arena arena;
	struct dtl_error error = {0};
	struct dtl_sim sim;
	const char *base_model = NULL;
	int r;

	if (size < 1 || names_special(data, size))
		return 0;
	if (!g.ready)
		setup();
	unsigned selector = data[0], importer = selector & 3, naming = (selector >> 2) & 3;
	bool json = importer == 0 || importer == 2;
	int name = naming == 0   ? (json ? NAME_JSON : NAME_YAML)
	           : naming == 1 ? (json ? NAME_YAML : NAME_JSON)
	                         : NAME_BARE;
	data++;
	size--;
	size_t file_size = size;
	const uint8_t *nul = (selector & 0x10) ? memchr(data, 0, size) : NULL;
	if (nul)
		file_size = (size_t)(nul - data);
	for (int i = 0; i < NAME_COUNT; i++) {
		if (i == name)
			put(i, data, file_size);
		else if (i == NAME_DS && nul)
			put(i, nul + 1, size - file_size - 1);
		else
			put(i, NULL, 0);
	}

	dtl_limits_default(&limits);
	dtl_arena_init(&arena);
	manifest = g.base;
	const char *path = g.path[name];
	switch (importer) {
	case 0:
		r = dtl_import_deepspeed(path, &arena, &limits, &manifest.plan, &error);
		break;
	case 1:
		r = dtl_import_accelerate(path, &arena, &limits, &manifest.plan, &error);
		break;
	case 2:
		r = dtl_import_peft(path, &arena, &limits, &manifest.adapter, &base_model, &error);
		if (r == 0 && base_model && strlen(base_model) > (size_t)INT_MAX)
			abort(); /* a string the importer handed out must be readable */
		break;
	default:
		r = dtl_import_trainer_args(path, &arena, &limits, &manifest, &error);
		break;
	}
	check_import_error(r, &error, path);
	if (r == 0 && (selector & 0x20)) {
		r = dtl_sim_run(&sim, &manifest, &manifest.plan, &g.behaviors, &arena, &error);
		if (r == 0)
			r = dtl_rules_run(&sim, &selection, NULL, &findings, &error);
		dtl_fuzz_check_error(r, &error);
		if (r == 0) {
			struct dtl_input_view view;
			if (dtl_input_view_init(&view, &sim, &findings, &arena) < 0)
				abort();
			struct dtl_report_input input = {.view = &view, .findings = &findings};
			if (dtl_report_text(g.sink, &input, 1) < 0 ||
			    dtl_report_json(g.sink, &input, 1) < 0)
				abort();
		}
	}
	dtl_arena_fini(&arena);
	return 0;
}
