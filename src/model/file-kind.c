/* SPDX-License-Identifier: MIT */
/*
 * What a file looks like (include/dtypelint/model/file-kind.h): one table of signatures, tried in
 * order, each a file name pattern or text at a line start (and text anywhere) that gives a
 * kind away. Every test is a bounded number of scans of the file: linear in its size.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtypelint/input/doc.h"
#include "dtypelint/model/file-kind.h"

/* "Not read yet" hints: the kinds of other frameworks whose settings are dtype settings. */
#define FRAMEWORK_HINT                                                                             \
	"dtypelint does not read this framework's configs yet: describe the model and its "        \
	"training: section in a manifest (man dtypelint-manifest), or pass the model folder "      \
	"with --strategy and --precision"
/* Kinds --framework-config reads (import-framework.c): said where the file goes. */
#define FRAMEWORK_CONFIG_HINT                                                                      \
	"pass it with --framework-config FILE (its command-line overrides with "                   \
	"--framework-override KEY=VALUE), and the model (a Hugging Face folder or a manifest) as " \
	"the input"
#define NOT_TRAINING                                                                               \
	"it holds no training set-up: pass the model folder or manifest, and the DeepSpeed, "      \
	"accelerate or trainer files the training uses"

/*
 * One signature. names: a basename ("Dockerfile"), a suffix ("*.ipynb"), a prefix
 * ("requirements*") or a folder the path goes through (".github/workflows/"). keys: text at
 * the start of a line, all of them; anywhere: text anywhere, all of them. A signature
 * matches by its name, or by its keys and anywhere texts (when it has any).
 */
struct signature {
	struct dtl_file_kind kind;
	const char *names[4];
	const char *keys[3];
	const char *anywhere[2];
};

#define KIND(id, what, reader, hint)                                                               \
	{                                                                                          \
		id, what, reader, hint                                                             \
	}

static const struct signature signatures[] = {
    /* dtypelint's own inputs */
    {KIND("dtypelint-config", "a dtypelint config (.dtypelint.yaml)", DTL_READ_CONFIG, NULL),
     {".dtypelint.yaml", "dtypelint.yaml"},
     {"setups:"},
     {NULL}},
    {KIND("manifest", "a dtypelint manifest", DTL_READ_MANIFEST, NULL),
     {NULL},
     {"dtypelint:"},
     {NULL}},
    {KIND("manifest", "a dtypelint manifest", DTL_READ_MANIFEST, NULL),
     {NULL},
     {NULL},
     {"\"dtypelint\"", "\"tensors\""}},
    {KIND("deepspeed", "a DeepSpeed config", DTL_READ_DEEPSPEED, NULL),
     {NULL},
     {NULL},
     {"\"zero_optimization\""}},
    {KIND("deepspeed", "a DeepSpeed config", DTL_READ_DEEPSPEED, NULL),
     {NULL},
     {NULL},
     {"\"train_micro_batch_size_per_gpu\""}},
    {KIND("accelerate", "an accelerate config", DTL_READ_ACCELERATE, NULL),
     {NULL},
     {"compute_environment:"},
     {NULL}},
    {KIND("accelerate", "an accelerate config", DTL_READ_ACCELERATE, NULL),
     {NULL},
     {"distributed_type:"},
     {NULL}},
    {KIND("peft", "a PEFT adapter_config.json", DTL_READ_PEFT, NULL),
     {"adapter_config.json"},
     {NULL},
     {"\"peft_type\""}},
    {KIND("hf-index", "a safetensors index (model.safetensors.index.json)", DTL_READ_FOLDER, NULL),
     {"*.safetensors.index.json"},
     {NULL},
     {"\"weight_map\""}},
    {KIND("safetensors", "a safetensors file", DTL_READ_FOLDER, NULL),
     {"*.safetensors"},
     {NULL},
     {NULL}},
    {KIND("hf-config", "a Hugging Face model config.json", DTL_READ_FOLDER, NULL),
     {NULL},
     {NULL},
     {"\"architectures\"", "\"model_type\""}},
    /* other frameworks' training configs (importers take precedence: import-registry.c) */
    {KIND("verl", "a verl config", DTL_READ_NONE, FRAMEWORK_CONFIG_HINT),
     {NULL},
     {"actor_rollout_ref:"},
     {NULL}},
    {KIND("torchtune", "a torchtune recipe", DTL_READ_NONE, FRAMEWORK_CONFIG_HINT),
     {NULL},
     {NULL},
     {"_component_: torchtune."}},
    {KIND("nemo-automodel", "a NeMo Automodel recipe", DTL_READ_NONE, FRAMEWORK_CONFIG_HINT),
     {NULL},
     {NULL},
     {"_target_: nemo_automodel."}},
    {KIND("torchtitan", "a torchtitan TOML job config", DTL_READ_NONE, FRAMEWORK_CONFIG_HINT),
     {NULL},
     {"[job]", "[training]"},
     {NULL}},
    {KIND("megatron", "a Megatron-LM config", DTL_READ_NONE, FRAMEWORK_HINT),
     {NULL},
     {NULL},
     {"tensor_model_parallel_size", "pipeline_model_parallel_size"}},
    {KIND("hydra", "a Hydra config", DTL_READ_NONE, FRAMEWORK_HINT),
     {NULL},
     {"defaults:"},
     {"_target_:"}},
    /* the trainer arguments dtypelint reads */
    {KIND("trainer-args", "trainer arguments (LLaMA-Factory, TRL, axolotl)", DTL_READ_TRAINER_ARGS,
          NULL),
     {NULL},
     {"model_name_or_path:"},
     {NULL}},
    {KIND("trainer-args", "trainer arguments (LLaMA-Factory, TRL, axolotl)", DTL_READ_TRAINER_ARGS,
          NULL),
     {NULL},
     {"base_model:"},
     {NULL}},
    /* what surrounds training: CI, containers, clusters, packaging */
    {KIND("notebook", "a Jupyter notebook", DTL_READ_NONE,
          "dtypelint does not run notebooks: put the set-up the notebook builds in a "
          "manifest, or lint the files it loads"),
     {"*.ipynb"},
     {NULL},
     {"\"nbformat\"", "\"cells\""}},
    {KIND("github-workflow", "a GitHub Actions workflow", DTL_READ_NONE,
          "lint the files the workflow trains with, or use dtypelint's own action "
          "(action.yml) in the workflow"),
     {".github/workflows/"},
     {"jobs:"},
     {"runs-on:"}},
    {KIND("gitlab-ci", "a GitLab CI pipeline", DTL_READ_NONE,
          "lint the files the pipeline trains with (--format gitlab for its report)"),
     {".gitlab-ci.yml"},
     {"stages:"},
     {"script:"}},
    {KIND("pre-commit", "a pre-commit config", DTL_READ_NONE,
          "add dtypelint's hook to it; the hook then lints the training files"),
     {".pre-commit-config.yaml", ".pre-commit-hooks.yaml"},
     {"repos:"},
     {NULL}},
    {KIND("dependabot", "a Dependabot config", DTL_READ_NONE, NOT_TRAINING),
     {"dependabot.yml"},
     {"updates:"},
     {"package-ecosystem"}},
    {KIND("kubernetes", "a Kubernetes manifest", DTL_READ_NONE,
          "lint the config files the pod's command trains with"),
     {NULL},
     {"apiVersion:", "kind:"},
     {NULL}},
    {KIND("helm-chart", "a Helm chart", DTL_READ_NONE, NOT_TRAINING),
     {"Chart.yaml"},
     {"apiVersion:", "name:", "version:"},
     {NULL}},
    {KIND("docker-compose", "a Docker Compose file", DTL_READ_NONE,
          "lint the config files the service's command trains with"),
     {"docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml"},
     {"services:"},
     {NULL}},
    {KIND("dockerfile", "a Dockerfile", DTL_READ_NONE,
          "lint the config files the image's command trains with"),
     {"Dockerfile", "Containerfile", "*.dockerfile"},
     {"FROM "},
     {NULL}},
    {KIND("conda-env", "a conda environment file", DTL_READ_NONE,
          "pin the framework versions with --with torch=X,deepspeed=Y instead"),
     {"environment.yml", "environment.yaml"},
     {"channels:", "dependencies:"},
     {NULL}},
    {KIND("mkdocs", "an MkDocs site config", DTL_READ_NONE, NOT_TRAINING),
     {"mkdocs.yml", "mkdocs.yaml"},
     {"site_name:"},
     {NULL}},
    {KIND("readthedocs", "a Read the Docs config", DTL_READ_NONE, NOT_TRAINING),
     {".readthedocs.yaml", ".readthedocs.yml"},
     {NULL},
     {NULL}},
    {KIND("codecov", "a Codecov config", DTL_READ_NONE, NOT_TRAINING),
     {"codecov.yml", ".codecov.yml"},
     {"coverage:"},
     {NULL}},
    {KIND("pyproject", "a Python project file (pyproject.toml)", DTL_READ_NONE,
          "pin the framework versions with --with torch=X,deepspeed=Y instead"),
     {"pyproject.toml"},
     {"[build-system]"},
     {NULL}},
    {KIND("pyproject", "a Python project file (pyproject.toml)", DTL_READ_NONE,
          "pin the framework versions with --with torch=X,deepspeed=Y instead"),
     {NULL},
     {"[project]"},
     {NULL}},
    {KIND("cargo", "a Cargo manifest", DTL_READ_NONE, NOT_TRAINING),
     {"Cargo.toml"},
     {"[package]"},
     {NULL}},
    {KIND("requirements", "a pip requirements file", DTL_READ_NONE,
          "pin the framework versions with --with torch=X,deepspeed=Y instead"),
     {"requirements*", "constraints*"},
     {NULL},
     {NULL}},
    {KIND("package-json", "an npm package.json", DTL_READ_NONE, NOT_TRAINING),
     {"package.json", "package-lock.json"},
     {NULL},
     {NULL}},
    {KIND("tsconfig", "a TypeScript config", DTL_READ_NONE, NOT_TRAINING),
     {"tsconfig.json", "jsconfig.json"},
     {NULL},
     {NULL}},
    {KIND("json-schema", "a JSON schema", DTL_READ_NONE, NOT_TRAINING),
     {"*.schema.json"},
     {NULL},
     {"\"$schema\""}},
    {KIND("makefile", "a Makefile", DTL_READ_NONE,
          "lint the config files its training command names"),
     {"Makefile", "GNUmakefile", "makefile", "*.mk"},
     {NULL},
     {NULL}},
    {KIND("cmake", "a CMake file", DTL_READ_NONE, NOT_TRAINING),
     {"CMakeLists.txt", "*.cmake"},
     {NULL},
     {NULL}},
    {KIND("ini", "an INI config (setup.cfg, tox.ini, ...)", DTL_READ_NONE, NOT_TRAINING),
     {"setup.cfg", "tox.ini", "*.ini", "*.cfg"},
     {NULL},
     {NULL}},
    /* scripts */
    {KIND("slurm", "a Slurm batch script", DTL_READ_LAUNCH, NULL), {NULL}, {"#SBATCH"}, {NULL}},
    {KIND("shell", "a shell script", DTL_READ_LAUNCH, NULL),
     {"*.sh", "*.bash", "*.zsh"},
     {"#!/bin/bash"},
     {NULL}},
    {KIND("shell", "a shell script", DTL_READ_LAUNCH, NULL), {NULL}, {"#!/bin/sh"}, {NULL}},
    {KIND("shell", "a shell script", DTL_READ_LAUNCH, NULL),
     {NULL},
     {"#!/usr/bin/env bash"},
     {NULL}},
    {KIND("shell", "a shell script", DTL_READ_LAUNCH, NULL), {NULL}, {"#!/usr/bin/env sh"}, {NULL}},
    {KIND("python", "Python source", DTL_READ_NONE,
          "dtypelint does not run Python: lint the config files the training script "
          "loads"),
     {"*.py", "*.pyi"},
     {"#!/usr/bin/env python"},
     {NULL}},
    {KIND("python", "Python source", DTL_READ_NONE,
          "dtypelint does not run Python: lint the config files the training script "
          "loads"),
     {NULL},
     {"import ", "def "},
     {NULL}},
    {KIND("markdown", "a Markdown or reStructuredText document", DTL_READ_NONE, NOT_TRAINING),
     {"*.md", "*.rst", "*.markdown"},
     {NULL},
     {NULL}},
    {KIND("csv", "a CSV table", DTL_READ_NONE, NOT_TRAINING), {"*.csv", "*.tsv"}, {NULL}, {NULL}},
    {KIND("html", "an HTML or XML document", DTL_READ_NONE, NOT_TRAINING),
     {"*.html", "*.htm", "*.xml"},
     {"<?xml"},
     {NULL}},
    {KIND("toml", "a TOML file", DTL_READ_NONE, NOT_TRAINING), {"*.toml"}, {NULL}, {NULL}},
};

/* The fallbacks, decided by the text itself: the caller keeps its own error for them. */
static const struct dtl_file_kind empty_kind =
    KIND("empty", "an empty file", DTL_READ_NONE, "an empty file describes no set-up");
static const struct dtl_file_kind comments_kind =
    KIND("comments", "a file of comments only", DTL_READ_NONE,
         "the file has comments and nothing else: no set-up to read");
static const struct dtl_file_kind binary_kind =
    KIND("binary", "a binary file", DTL_READ_NONE, "dtypelint reads text configs");
static const struct dtl_file_kind json_kind = KIND("json", "a JSON document", DTL_READ_NONE, NULL);
static const struct dtl_file_kind yaml_kind = KIND("yaml", "a YAML document", DTL_READ_NONE, NULL);
static const struct dtl_file_kind text_kind = KIND("text", "a text file", DTL_READ_NONE, NULL);

bool dtl_file_kind_generic(const struct dtl_file_kind *kind)
{
	return kind == &json_kind || kind == &yaml_kind || kind == &text_kind;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool name_matches(const char *path, const char *pattern)
{
	const char *base = base_name(path);
	size_t n = strlen(pattern), b = strlen(base);

	if (pattern[n - 1] == '/') /* a folder on the way */
		return memmem(path, strlen(path), pattern, n) != NULL;
	if (pattern[0] == '*')
		return b >= n - 1 && memcmp(base + b - (n - 1), pattern + 1, n - 1) == 0;
	if (pattern[n - 1] == '*')
		return b >= n - 1 && memcmp(base, pattern, n - 1) == 0;
	return strcmp(base, pattern) == 0;
}

/* The first occurrence of needle at the start of a line (at column 1), or NULL. */
static const char *at_line_start(const struct dtl_source *s, const char *needle)
{
	size_t n = strlen(needle);
	const char *p = s->data, *end = s->data + s->size;

	while (p < end) {
		const char *hit = memmem(p, (size_t)(end - p), needle, n);
		if (!hit)
			return NULL;
		if (hit == s->data || hit[-1] == '\n')
			return hit;
		p = hit + 1;
	}
	return NULL;
}

static const char *anywhere(const struct dtl_source *s, const char *needle)
{
	return memmem(s->data, s->size, needle, strlen(needle));
}

/* 1-based line and column (in code points) of at */
static struct dtl_loc loc_of(const struct dtl_source *s, const char *at)
{
	struct dtl_loc loc = {.file = s->path, .line = 1, .column = 1};

	for (const char *p = s->data; p < at; p++) {
		if (*p == '\n') {
			loc.line++;
			loc.column = 1;
		} else if (((unsigned char)*p & 0xc0) != 0x80) {
			loc.column++;
		}
	}
	return loc;
}

/* The signature's evidence in s, or NULL when its content does not match. */
static const char *content_match(const struct signature *sig, const struct dtl_source *s)
{
	const char *first = NULL, *hit;

	if (!sig->keys[0] && !sig->anywhere[0])
		return NULL;
	for (size_t i = 0; i < 3 && sig->keys[i]; i++) {
		if (!(hit = at_line_start(s, sig->keys[i])))
			return NULL;
		first = first ? first : hit;
	}
	for (size_t i = 0; i < 2 && sig->anywhere[i]; i++) {
		if (!(hit = anywhere(s, sig->anywhere[i])))
			return NULL;
		first = first ? first : hit;
	}
	return first;
}

/* Empty, comments only, or binary: by the text alone. */
static const struct dtl_file_kind *by_text(const struct dtl_source *s)
{
	bool blank = true, comments = true, line_start = true, in_comment = false;

	if (memchr(s->data, '\0', s->size))
		return &binary_kind;
	for (size_t i = 0; i < s->size; i++) {
		char c = s->data[i];
		if (c == '\n') {
			line_start = true;
			in_comment = false;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			continue;
		} else {
			blank = false;
			if (line_start && c == '#')
				in_comment = true;
			else if (!in_comment)
				comments = false;
			line_start = false;
		}
	}
	return blank ? &empty_kind : comments ? &comments_kind : NULL;
}

void dtl_file_kind_guess(const struct dtl_source *s, struct dtl_file_guess *ret)
{
	const struct dtl_file_kind *plain = by_text(s);

	*ret = (struct dtl_file_guess){.loc = {.file = s->path, .line = 1, .column = 1}};
	if (plain) {
		ret->kind = plain;
		ret->evidence = "its text";
		return;
	}
	for (size_t i = 0; i < sizeof(signatures) / sizeof(signatures[0]); i++) {
		const struct signature *sig = &signatures[i];
		for (size_t k = 0; k < 4 && sig->names[k]; k++)
			if (name_matches(s->path, sig->names[k])) {
				ret->kind = &sig->kind;
				ret->evidence = "its name";
				return;
			}
		const char *hit = content_match(sig, s);
		if (hit) {
			ret->kind = &sig->kind;
			ret->evidence = sig->keys[0] ? sig->keys[0] : sig->anywhere[0];
			ret->loc = loc_of(s, hit);
			return;
		}
	}
	const char *p = s->data;
	while (p < s->data + s->size && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	ret->evidence = "its text";
	ret->kind = *p == '{' || *p == '['          ? &json_kind
	            : memchr(s->data, ':', s->size) ? &yaml_kind
	                                            : &text_kind;
}

const char *dtl_file_reader_option(enum dtl_file_reader reader)
{
	switch (reader) {
	case DTL_READ_NONE:
		return NULL;
	case DTL_READ_MANIFEST:
		return "the input (a manifest)";
	case DTL_READ_FOLDER:
		return "the input, as the model folder that holds it";
	case DTL_READ_DEEPSPEED:
		return "--deepspeed FILE";
	case DTL_READ_ACCELERATE:
		return "--accelerate FILE";
	case DTL_READ_PEFT:
		return "--peft FILE";
	case DTL_READ_TRAINER_ARGS:
		return "--trainer-args FILE";
	case DTL_READ_CONFIG:
		return "--config FILE";
	case DTL_READ_LAUNCH:
		return "--launch FILE, with the model folder or manifest as INPUT";
	}
	return NULL;
}

/* "keys a, b, c and 4 more" of a mapping's top level (none read), or "" */
static const char *top_keys(const struct dtl_source *s, struct dtl_arena *arena,
                            const struct dtl_limits *limits)
{
	struct dtl_arena scratch;
	struct dtl_node *root = NULL;
	struct dtl_error ignored = {0};
	char buf[240];
	size_t used = 0, shown = 0;

	dtl_arena_init(&scratch);
	buf[0] = '\0';
	if (dtl_doc_parse(s, &scratch, limits, &root, &ignored) == 0 && root &&
	    root->type == DTL_NODE_MAP) {
		for (size_t i = 0; i < root->map.count; i++) {
			const struct dtl_node *k = &root->map.pairs[i].key;
			if (k->type != DTL_NODE_STRING || k->string.len > 40 ||
			    used + k->string.len + 3 >= 160)
				continue;
			used +=
			    (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%.*s",
			                     shown ? ", " : "", (int)k->string.len, k->string.text);
			shown++;
		}
		if (shown < root->map.count)
			snprintf(buf + used, sizeof(buf) - used, "%s%zu more", shown ? " and " : "",
			         root->map.count - shown);
	}
	dtl_arena_fini(&scratch);
	if (!buf[0])
		return "";
	return dtl_arena_sprintf(arena, "; keys not read: %s", buf);
}

int dtl_file_not_read(const struct dtl_source *s, const struct dtl_file_guess *g, const char *role,
                      struct dtl_arena *arena, const struct dtl_limits *limits,
                      struct dtl_error *error)
{
	const char *option = dtl_file_reader_option(g->kind->reader);
	/* an empty, comment-only or binary file has no keys to name */
	const char *keys =
	    g->kind == &empty_kind || g->kind == &comments_kind || g->kind == &binary_kind
	        ? ""
	        : top_keys(s, arena, limits);
	const char *evidence =
	    strcmp(g->evidence, "its name") == 0 || strcmp(g->evidence, "its text") == 0
	        ? dtl_arena_sprintf(arena, "by %s", g->evidence)
	        : dtl_arena_sprintf(arena, "'%s' at %u:%u", g->evidence, g->loc.line,
	                            g->loc.column);
	if (!keys || !evidence)
		return -ENOMEM;
	if (option)
		return dtl_error_set(
		    error, g->loc, -EINVAL,
		    "dtypelint does not read this file as %s: it looks like %s (%s)"
		    "%s; pass it as %s",
		    role, g->kind->what, evidence, keys, option);
	return dtl_error_set(error, g->loc, -EINVAL,
	                     "dtypelint does not read this file: it looks like %s (%s)%s; %s",
	                     g->kind->what, evidence, keys,
	                     g->kind->hint ? g->kind->hint
	                                   : "dtypelint reads manifests, model folders and the "
	                                     "DeepSpeed, accelerate, PEFT and trainer files "
	                                     "of a training set-up (see --help)");
}

/* Whether s is a mapping none of whose top-level keys own_key() takes (a document that does
 * not parse, or is no mapping, is left to its reader's own error) */
static bool foreign_mapping(const struct dtl_source *s, const struct dtl_limits *limits,
                            bool (*own_key)(const char *key, size_t len))
{
	struct dtl_arena scratch;
	struct dtl_node *root = NULL;
	struct dtl_error ignored = {0};
	bool foreign = false;

	dtl_arena_init(&scratch);
	if (dtl_doc_parse(s, &scratch, limits, &root, &ignored) == 0 && root &&
	    root->type == DTL_NODE_MAP) {
		foreign = true;
		for (size_t i = 0; i < root->map.count && foreign; i++) {
			const struct dtl_node *k = &root->map.pairs[i].key;
			foreign =
			    k->type != DTL_NODE_STRING || !own_key(k->string.text, k->string.len);
		}
	}
	dtl_arena_fini(&scratch);
	return foreign;
}

/* Whether s parses as a document (JSON, YAML or TOML, by its name and text) */
static bool parses(const struct dtl_source *s, const struct dtl_limits *limits)
{
	struct dtl_arena scratch;
	struct dtl_node *root = NULL;
	struct dtl_error ignored = {0};

	dtl_arena_init(&scratch);
	bool ok = dtl_doc_parse(s, &scratch, limits, &root, &ignored) == 0;
	dtl_arena_fini(&scratch);
	return ok;
}

int dtl_file_check_role(const char *path, const char *role, const enum dtl_file_reader *accepted,
                        size_t accepted_count, bool (*own_key)(const char *key, size_t len),
                        struct dtl_arena *arena, const struct dtl_limits *limits,
                        struct dtl_file_guess *ret_guess, struct dtl_error *error)
{
	struct dtl_source s;
	int r;

	*ret_guess = (struct dtl_file_guess){0};
	if ((r = dtl_source_read(&s, path, limits, error)) < 0)
		return r;
	const char *kept = dtl_arena_strndup(arena, path, strlen(path));
	if (!kept) {
		dtl_source_fini(&s);
		return -ENOMEM;
	}
	dtl_file_kind_guess(&s, ret_guess);
	ret_guess->loc.file = kept;
	/* a document nothing tells apart is the role's own unless it is a mapping with none of
	 * its keys; an empty, comment-only or binary file gets the reader's own error ("the file
	 * is empty", "a NUL byte") */
	const struct dtl_file_kind *kind = ret_guess->kind;
	bool ok =
	    kind == &empty_kind || kind == &comments_kind || kind == &binary_kind ||
	    (dtl_file_kind_generic(kind) && (!own_key || !foreign_mapping(&s, limits, own_key))) ||
	    /* a TOML file known by its name alone that does not parse: the reader's error says
	     * where, which is more than "a TOML file" */
	    (strcmp(kind->id, "toml") == 0 && !parses(&s, limits));
	for (size_t i = 0; i < accepted_count && !ok; i++)
		ok = kind->reader == accepted[i];
	r = ok ? 0 : dtl_file_not_read(&s, ret_guess, role, arena, limits, error);
	dtl_source_fini(&s);
	return r;
}
