/* SPDX-License-Identifier: MIT */
/*
 * The safetensors header reader (issue 5): files the tests write themselves into a mkdtemp
 * directory, sparse where the nominal size is large (ftruncate), valid and malicious.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../dtl-test.h"
#include "dtypelint/input/safetensors.h"

static char tmpdir[PATH_MAX];
static struct dtl_arena arena;
static struct dtl_limits limits;

static void setup(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/dtl-safetensors-XXXXXX",
	         base && *base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	dtl_arena_init(&arena);
	dtl_limits_default(&limits);
}

static void teardown(void)
{
	DIR *dir = opendir(tmpdir);

	if (dir) {
		struct dirent *entry;
		while ((entry = readdir(dir))) {
			if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
				continue;
			if (unlinkat(dirfd(dir), entry->d_name, 0) < 0)
				unlinkat(dirfd(dir), entry->d_name, AT_REMOVEDIR);
		}
		closedir(dir);
	}
	rmdir(tmpdir);
	dtl_arena_fini(&arena);
}

/* A path in tmpdir, in the arena. */
static const char *path_of(const char *name)
{
	return dtl_arena_sprintf(&arena, "%s/%s", tmpdir, name);
}

/* Writes bytes then extends the file (sparsely) to total bytes. */
static const char *write_raw(const char *name, const void *bytes, size_t len, uint64_t total)
{
	const char *path = path_of(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
	if (total > len)
		ck_assert_int_eq(ftruncate(fd, (off_t)total), 0);
	close(fd);
	return path;
}

static void put_le64(unsigned char *out, uint64_t v)
{
	for (int k = 0; k < 8; k++)
		out[k] = (unsigned char)(v >> (8 * k));
}

/* A safetensors file: prefix N = len, the header bytes, data_size bytes of (sparse) data. */
static const char *write_st(const char *name, const char *header, size_t len, uint64_t data_size)
{
	unsigned char *buf = dtl_arena_alloc(&arena, len + 8);

	put_le64(buf, len);
	memcpy(buf + 8, header, len);
	return write_raw(name, buf, len + 8, 8 + len + data_size);
}

/* JSON written with ' for " (tests read better), in the arena. */
static char *json(const char *squoted)
{
	char *out = dtl_arena_strndup(&arena, squoted, strlen(squoted));

	for (char *c = out; *c; c++)
		if (*c == '\'')
			*c = '"';
	return out;
}

static const char *write_json(const char *name, const char *squoted, uint64_t data_size)
{
	const char *text = json(squoted);
	return write_st(name, text, strlen(text), data_size);
}

static void assert_error(int rc, const struct dtl_error *error, const char *path, int code,
                         uint32_t line, uint32_t column, const char *message)
{
	ck_assert_int_eq(rc, code);
	ck_assert_str_eq(error->message, message);
	ck_assert_str_eq(error->loc.file, path);
	ck_assert_uint_eq(error->loc.line, line);
	ck_assert_uint_eq(error->loc.column, column);
}

static int read_file(const char *path, struct dtl_safetensors_header *header,
                     struct dtl_error *error)
{
	memset(error, 0, sizeof(*error));
	return dtl_safetensors_read_header(path, &limits, &arena, header, error);
}

/* ---- valid files ----------------------------------------------------------------------- */

START_TEST(test_all_dtypes)
{
	static const struct {
		const char *name;
		enum dtl_dtype dtype;
		size_t itemsize;
	} dtypes[] = {
	    {"F64", DTL_DTYPE_F64, 8},
	    {"F32", DTL_DTYPE_F32, 4},
	    {"F16", DTL_DTYPE_F16, 2},
	    {"BF16", DTL_DTYPE_BF16, 2},
	    {"F8_E4M3", DTL_DTYPE_F8_E4M3FN, 1},
	    {"F8_E5M2", DTL_DTYPE_F8_E5M2, 1},
	    {"I64", DTL_DTYPE_I64, 8},
	    {"I32", DTL_DTYPE_I32, 4},
	    {"I16", DTL_DTYPE_I16, 2},
	    {"I8", DTL_DTYPE_I8, 1},
	    {"U8", DTL_DTYPE_U8, 1},
	    {"BOOL", DTL_DTYPE_BOOL, 1},
	};
	const size_t count = sizeof(dtypes) / sizeof(dtypes[0]);
	uint64_t begin[12], end[12], offset = 0;
	char text[4096];
	size_t o = 0;

	/* The data section holds the tensors in reverse JSON order, as writers that sort by
	 * alignment do: file order and offset order differ. */
	for (size_t k = count; k-- > 0;) {
		begin[k] = offset;
		offset += 2 * 3 * dtypes[k].itemsize;
		end[k] = offset;
	}
	o += (size_t)snprintf(text + o, sizeof(text) - o,
	                      "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"caf\\u00e9\"}");
	for (size_t k = 0; k < count; k++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
		                      ",\"t.%s\":{\"dtype\":\"%s\",\"shape\":[2,3],"
		                      "\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}",
		                      dtypes[k].name, dtypes[k].name, begin[k], end[k]);
	o += (size_t)snprintf(text + o, sizeof(text) - o, "}");
	const char *path = write_st("all.safetensors", text, o, offset);

	struct dtl_safetensors_header header;
	struct dtl_error error;
	ck_assert_int_eq(read_file(path, &header, &error), 0);
	ck_assert_uint_eq(header.tensor_count, count);
	ck_assert_uint_eq(header.header_len, o);
	ck_assert_uint_eq(header.data_size, offset);
	ck_assert_uint_eq(header.file_size, 8 + o + offset);
	ck_assert(header.has_metadata);
	ck_assert_uint_eq(header.metadata_count, 2);
	ck_assert_str_eq(header.metadata[0].key, "format");
	ck_assert_str_eq(header.metadata[0].value, "pt");
	ck_assert_str_eq(header.metadata[1].key, "note");
	ck_assert_str_eq(header.metadata[1].value, "caf\xc3\xa9");
	ck_assert_uint_eq(header.metadata[1].value_len, 5);
	for (size_t k = 0; k < count; k++) {
		const struct dtl_safetensors_tensor *t = &header.tensors[k];
		char name[32];
		snprintf(name, sizeof(name), "t.%s", dtypes[k].name);
		ck_assert_str_eq(t->name, name);
		ck_assert_uint_eq(t->name_len, strlen(name));
		ck_assert_int_eq(t->dtype, dtypes[k].dtype);
		ck_assert_uint_eq(t->rank, 2);
		ck_assert_int_eq(t->shape[0], 2);
		ck_assert_int_eq(t->shape[1], 3);
		ck_assert_int_eq(t->numel, 6);
		ck_assert_uint_eq(t->begin, begin[k]);
		ck_assert_uint_eq(t->end, end[k]);
		ck_assert_str_eq(dtl_safetensors_dtype_name(t->dtype), dtypes[k].name);
		/* the column of the name's opening quote */
		const char *at = strstr(text, name);
		ck_assert_uint_eq(t->name_column, (uint32_t)(at - 1 - text) + 9);
		/* by_offset lists them by offset: the reverse here */
		ck_assert_uint_eq(header.by_offset[k], count - 1 - k);
	}
}
END_TEST

/* Hundreds of GB of nominal data, none of it on disk, read in milliseconds. */
START_TEST(test_sparse_hundreds_of_gb)
{
	const uint64_t embed = (uint64_t)1 << 38;   /* [1048576, 131072] BF16: 256 GiB */
	const uint64_t experts = (uint64_t)1 << 37; /* [1048576, 32768] F32: 128 GiB */
	char text[512];
	int len = snprintf(text, sizeof(text),
	                   "{\"model.embed_tokens.weight\":{\"dtype\":\"BF16\",\"shape\":[1048576,"
	                   "131072],\"data_offsets\":[0,%" PRIu64 "]},"
	                   "\"model.layers.0.mlp.experts.0.gate_proj.weight\":{\"dtype\":\"F32\","
	                   "\"shape\":[1048576,32768],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}}",
	                   embed, embed, embed + experts);
	const char *path = write_st("huge.safetensors", text, (size_t)len, embed + experts);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, 8 + (uint64_t)len + embed + experts);
	ck_assert_uint_lt((uint64_t)st.st_blocks * 512, 1 << 20); /* really sparse */

	struct dtl_safetensors_header header;
	struct dtl_error error;
	/* only the header is read: the timing is measured by the benchmark, not asserted here */
	ck_assert_int_eq(read_file(path, &header, &error), 0);
	ck_assert_uint_eq(header.tensor_count, 2);
	ck_assert_uint_eq(header.data_size, embed + experts);
	ck_assert_int_eq(header.tensors[0].numel, (int64_t)1 << 37);
	ck_assert_uint_eq(header.tensors[1].end, embed + experts);
	ck_assert(!header.has_metadata);
}
END_TEST

START_TEST(test_padding_and_empty)
{
	struct dtl_safetensors_header header;
	struct dtl_error error;

	/* what the reference writer emits for no tensors: "{}" padded to 8 bytes */
	ck_assert_int_eq(
	    read_file(write_st("empty.safetensors", "{}      ", 8, 0), &header, &error), 0);
	ck_assert_uint_eq(header.tensor_count, 0);
	ck_assert_ptr_null(header.by_offset);
	ck_assert_uint_eq(header.header_len, 8);
	ck_assert(!header.has_metadata);

	/* its test_empty() with metadata: 40 bytes, 5 spaces of padding */
	const char *meta = "{\"__metadata__\":{\"framework\":\"pt\"}}     ";
	ck_assert_int_eq(strlen(meta), 40);
	ck_assert_int_eq(read_file(write_st("meta.safetensors", meta, 40, 0), &header, &error), 0);
	ck_assert(header.has_metadata);
	ck_assert_uint_eq(header.metadata_count, 1);
	ck_assert_str_eq(header.metadata[0].key, "framework");

	/* any JSON whitespace after the object, as serde_json accepts */
	const char *ws = "{\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}} \n\t\r  ";
	ck_assert_int_eq(read_file(write_st("ws.safetensors", ws, strlen(ws), 3), &header, &error),
	                 0);
	ck_assert_uint_eq(header.tensor_count, 1);

	/* whitespace inside, metadata null, empty metadata */
	ck_assert_int_eq(
	    read_file(write_json("null.safetensors",
	                         "{ '__metadata__' : null ,\n 'a' : { 'dtype' : 'I8' ,"
	                         " 'shape' : [ 1 , 2 ] , 'data_offsets' : [ 0 , 2 ] } }",
	                         2),
	              &header, &error),
	    0);
	ck_assert(!header.has_metadata);
	ck_assert_int_eq(header.tensors[0].shape[1], 2);
	ck_assert_int_eq(read_file(write_json("emptymeta.safetensors", "{'__metadata__':{}}", 0),
	                           &header, &error),
	                 0);
	ck_assert(header.has_metadata);
	ck_assert_uint_eq(header.metadata_count, 0);
}
END_TEST

START_TEST(test_scalar_and_empty_tensors)
{
	struct dtl_safetensors_header header;
	struct dtl_error error;
	const char *path =
	    write_json("scalars.safetensors",
	               "{'step':{'dtype':'I64','shape':[],'data_offsets':[0,8]},"
	               "'empty':{'dtype':'BF16','shape':[0,4096],'data_offsets':[8,8]},"
	               "'huge_but_empty':{'dtype':'F32','shape':[9007199254740992,0],"
	               "'data_offsets':[8,8]},"
	               "'loss_scale':{'dtype':'F32','shape':[1],'data_offsets':[8,12]}}",
	               12);

	ck_assert_int_eq(read_file(path, &header, &error), 0);
	ck_assert_uint_eq(header.tensor_count, 4);
	ck_assert_uint_eq(header.tensors[0].rank, 0);
	ck_assert_ptr_null(header.tensors[0].shape);
	ck_assert_int_eq(header.tensors[0].numel, 1);
	ck_assert_int_eq(header.tensors[1].numel, 0);
	ck_assert_int_eq(header.tensors[2].shape[0], (int64_t)1 << 53);
	ck_assert_int_eq(header.tensors[2].numel, 0);
	ck_assert_int_eq(header.tensors[3].numel, 1);
	/* sorted by (begin, end): step, empty, huge_but_empty, loss_scale */
	ck_assert_uint_eq(header.by_offset[0], 0);
	ck_assert_uint_eq(header.by_offset[1], 1);
	ck_assert_uint_eq(header.by_offset[2], 2);
	ck_assert_uint_eq(header.by_offset[3], 3);
}
END_TEST

START_TEST(test_names_and_escapes)
{
	struct dtl_safetensors_header header;
	struct dtl_error error;
	/* \u escapes (one a surrogate pair), raw UTF-8, escaped quote and backslash; keys of
	 * the entry spelled with escapes still count. Unknown keys are skipped. */
	const char *text =
	    "{\"caf\\u00e9.w\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]},"
	    "\"\xe6\xa8\xa1\xe5\x9e\x8b.weight\":{\"dtype\":\"F16\",\"shape\":[1],"
	    "\"data_offsets\":[2,4]},"
	    "\"smile\\ud83d\\ude00\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[4,6]},"
	    "\"q\\\"b\\\\s\\/\\t\":{\"d\\u0074ype\":\"F16\",\"shape\":[1],\"data_offsets\":[6,8],"
	    "\"extra\":{\"nested\":[1,-2.5e3,true,false,null,\"x\",{}],\"e\":[]},\"z\":0}}";
	const char *path = write_st("names.safetensors", text, strlen(text), 8);

	ck_assert_int_eq(read_file(path, &header, &error), 0);
	ck_assert_uint_eq(header.tensor_count, 4);
	ck_assert_str_eq(header.tensors[0].name, "caf\xc3\xa9.w");
	ck_assert_uint_eq(header.tensors[0].name_len, 7);
	ck_assert_str_eq(header.tensors[1].name, "\xe6\xa8\xa1\xe5\x9e\x8b.weight");
	ck_assert_str_eq(header.tensors[2].name, "smile\xf0\x9f\x98\x80");
	ck_assert_str_eq(header.tensors[3].name, "q\"b\\s/\t");
	ck_assert_uint_eq(header.tensors[3].name_len, 7);
	ck_assert_int_eq(header.tensors[3].dtype, DTL_DTYPE_F16);
}
END_TEST

/* The in-memory half, as fuzzers use it: no file at all, a nominal size of 1 TB. */
START_TEST(test_in_memory)
{
	const char *text = json("{'w':{'dtype':'BF16','shape':[500000000000],"
	                        "'data_offsets':[0,1000000000000]}}");
	size_t len = strlen(text);
	uint64_t file_size = 8 + len + 1000000000000ULL;
	unsigned char prefix[8];
	uint64_t header_len = 0;
	struct dtl_safetensors_header header;
	struct dtl_error error;

	put_le64(prefix, len);
	ck_assert_int_eq(
	    dtl_safetensors_parse_prefix("mem", prefix, file_size, &limits, &header_len, &error),
	    0);
	ck_assert_uint_eq(header_len, len);
	ck_assert_int_eq(dtl_safetensors_parse_header("mem", (const unsigned char *)text, len,
	                                              file_size, &limits, &arena, &header, &error),
	                 0);
	ck_assert_uint_eq(header.tensors[0].numel, 500000000000LL);
	ck_assert_uint_eq(header.data_size, 1000000000000ULL);

	/* the header need not be NUL-terminated: parse all but the closing brace */
	int rc = dtl_safetensors_parse_header("mem", (const unsigned char *)text, len - 1,
	                                      file_size - 1, &limits, &arena, &header, &error);
	assert_error(
	    rc, &error, "mem", -EINVAL, 1, (uint32_t)(len - 1) + 9,
	    "safetensors header: expected ',' or '}' after the entry of 'w', found the end "
	    "of the header");
}
END_TEST

START_TEST(test_many_tensors)
{
	const size_t count = 20000;
	size_t cap = count * 120 + 64, o = 0;
	char *text = dtl_arena_alloc(&arena, cap);
	struct dtl_safetensors_header header;
	struct dtl_error error;

	o += (size_t)snprintf(text + o, cap - o, "{");
	for (size_t k = 0; k < count; k++)
		o += (size_t)snprintf(
		    text + o, cap - o,
		    "%s\"model.layers.%zu.mlp.experts.%zu.up_proj.weight\":"
		    "{\"dtype\":\"BF16\",\"shape\":[8,4],\"data_offsets\":[%zu,%zu]}",
		    k ? "," : "", k / 128, k % 128, k * 64, k * 64 + 64);
	o += (size_t)snprintf(text + o, cap - o, "}");
	ck_assert_uint_lt(o, cap);
	ck_assert_int_eq(
	    read_file(write_st("many.safetensors", text, o, count * 64), &header, &error), 0);
	ck_assert_uint_eq(header.tensor_count, count);
	ck_assert_str_eq(header.tensors[count - 1].name,
	                 "model.layers.156.mlp.experts.31.up_proj.weight");
	for (size_t k = 0; k < count; k++)
		ck_assert_uint_eq(header.by_offset[k], k);
}
END_TEST

START_TEST(test_dtype_names)
{
	ck_assert_ptr_null(dtl_safetensors_dtype_name(DTL_DTYPE_NONE));
	for (int d = DTL_DTYPE_NONE + 1; d < DTL_DTYPE_COUNT; d++) {
		const char *name = dtl_safetensors_dtype_name((enum dtl_dtype)d);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(dtl_dtype_parse(name, strlen(name)), d);
	}
}
END_TEST

/* ---- I/O and the length prefix --------------------------------------------------------- */

START_TEST(test_io_errors)
{
	struct dtl_safetensors_header header;
	struct dtl_error error;
	const char *missing = path_of("missing.safetensors");
	const char *dir = path_of("a-directory");
	const char *fifo = path_of("a-fifo");

	assert_error(read_file(missing, &header, &error), &error, missing, -ENOENT, 0, 0,
	             "cannot open: No such file or directory");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	assert_error(read_file(dir, &header, &error), &error, dir, -EISDIR, 0, 0,
	             "is a directory, not a safetensors file");
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	assert_error(read_file(fifo, &header, &error), &error, fifo, -EINVAL, 0, 0,
	             "not a regular file, cannot be a safetensors file");
}
END_TEST

START_TEST(test_length_prefix)
{
	struct dtl_safetensors_header header;
	struct dtl_error error;
	unsigned char buf[64] = {0};
	const char *path;

	path = write_raw("short.safetensors", "\x10\0\0\0\0", 5, 5);
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, 1,
	             "safetensors header: file is 5 bytes, shorter than the 8-byte length prefix");
	path = write_raw("zero-bytes.safetensors", "", 0, 0);
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, 1,
	             "safetensors header: file is 0 bytes, shorter than the 8-byte length prefix");

	put_le64(buf, 0);
	memcpy(buf + 8, "{}", 2);
	path = write_raw("n0.safetensors", buf, 10, 10);
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, 1,
	             "safetensors header: length prefix is 0; expected the byte length of the "
	             "JSON header that follows it");

	/* 100 MB+ header length: refused before anything is allocated or read, also when the
	 * (sparse) file is large enough to hold it */
	put_le64(buf, 150000000);
	path = write_raw("n150m.safetensors", buf, 10, (uint64_t)1 << 30);
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, 1,
	             "safetensors header: length prefix names a header longer than the limit of "
	             "100000000 bytes (limits.max_safetensors_header)");
	put_le64(buf, UINT64_MAX);
	path = write_raw("nmax.safetensors", buf, 10, 10);
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, 1,
	             "safetensors header: length prefix names a header longer than the limit of "
	             "100000000 bytes (limits.max_safetensors_header)");

	/* length past the end of the file */
	put_le64(buf, 100);
	memcpy(buf + 8, "{}", 2);
	path = write_raw("past-eof.safetensors", buf, 10, 58);
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, 1,
	             "safetensors header: length prefix names a header longer than the 50 bytes "
	             "that follow it (file size 58)");
}
END_TEST

/* Bytes the table below cannot spell: NUL, invalid UTF-8. */
START_TEST(test_bytes)
{
	static const struct {
		const char *text;
		size_t len;
		uint64_t data_size;
		size_t at; /* byte offset in the header */
		const char *message;
	} cases[] = {
	    {"{}\0\0", 4, 0, 2,
	     "expected only whitespace padding after the header object, found byte 0x00"},
	    {"{\"a\xff\":1}", 8, 0, 3, "not valid UTF-8: byte 0xff cannot start a character"},
	    {"{\"\xc0\xaf\":1}", 8, 0, 2, "not valid UTF-8: byte 0xc0 cannot start a character"},
	    {"{\"\xed\xa0\x80\":1}", 9, 0, 2,
	     "not valid UTF-8: bytes 0xed 0xa0 0x80 do not form a character"},
	    {"{\"\xf4\x90\x80\x80\":1}", 10, 0, 2,
	     "not valid UTF-8: bytes 0xf4 0x90 0x80 0x80 do not form a character"},
	    {"{}   \xe2\x82", 7, 0, 5, "not valid UTF-8: bytes 0xe2 0x82 do not form a character"},
	    {"\xef\xbb\xbf{}", 5, 0, 0, "expected a JSON object, found byte 0xef"},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct dtl_safetensors_header header;
		struct dtl_error error;
		char name[32], message[512];
		snprintf(name, sizeof(name), "bytes-%zu.safetensors", k);
		const char *path = write_st(name, cases[k].text, cases[k].len, cases[k].data_size);
		snprintf(message, sizeof(message), "safetensors header: %s", cases[k].message);
		assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1,
		             (uint32_t)cases[k].at + 9, message);
	}
}
END_TEST

/* ---- malicious headers: exact message and column ----------------------------------------
 * text: JSON with ' for "; at: where the column points, as "context|target" (the column is
 * that of the byte after '|'; without '|', of the first byte), NULL for column 1, "$" for the
 * end of the header. In messages {N} is the header length and {F} the file size. */
struct bad_case {
	const char *text;
	uint64_t data_size;
	const char *at;
	const char *message;
};

#define T_A "'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[0,32]}"

static const struct bad_case bad_cases[] = {
    /* not JSON, not an object, broken JSON */
    {"hello world!", 0, "hello", "expected a JSON object, found 'h'"},
    {"[1,2]", 0, "[", "expected a JSON object, found an array"},
    {"'{}'", 0, "'", "expected a JSON object, found a string"},
    {" {}", 0, " ",
     "expected '{' as the first byte of the header (the format requires it), found "
     "whitespace"},
    {"{'a':", 0, "$",
     "tensor 'a': expected an object with \"dtype\", \"shape\" and \"data_offsets\", found the "
     "end of the header"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[0,32]}", 32, "$",
     "expected ',' or '}' after the entry of 'a', found the end of the header"},
    {"{" T_A "}x", 32, "}|x",
     "expected only whitespace padding after the header object, found 'x'"},
    {"{" T_A ",}", 32, ",|}", "expected a tensor name (a JSON string), found '}'"},
    {"{a:1}", 0, "a", "expected a tensor name (a JSON string), found 'a'"},
    {"{'a' 1}", 0, "1", "expected ':' after 'a', found a number"},
    {"{'a':{'dtype':'BF16' 'shape':[4,4]}}", 0, "'shape'",
     "tensor 'a': expected ',' or '}', found a string"},
    {"{'a", 0, "'a", "unterminated string (a tensor name): the header ends before its '\"'"},
    {"{'a':5}", 0, "5",
     "tensor 'a': expected an object with \"dtype\", \"shape\" and \"data_offsets\", found a "
     "number"},
    /* strings */
    {"{'a\nb':1}", 0, "\n", "control character U+000A in a tensor name: JSON requires it escaped"},
    {"{'a\\qb':1}", 0, "\\", "invalid escape '\\q' in a tensor name"},
    {"{'a\\u00zz':1}", 0, "\\",
     "invalid escape in a tensor name: '\\u' must be followed by 4 hex digits"},
    {"{'a\\u0000b':1}", 0, "\\", "U+0000 (\\u0000) in a tensor name is not supported"},
    {"{'a\\ud800b':1}", 0, "\\", "lone UTF-16 surrogate \\uD800 in a tensor name"},
    {"{'a\\udc00':1}", 0, "\\", "lone UTF-16 surrogate \\uDC00 in a tensor name"},
    /* dtypes */
    {"{'a':{'dtype':'bf16','shape':[4,4],'data_offsets':[0,32]}}", 32, "'bf16'",
     "tensor 'a': unknown dtype 'bf16'; expected one of F64, F32, F16, BF16, F8_E4M3, F8_E5M2, "
     "I64, I32, I16, I8, U8, BOOL (names are upper case: 'BF16')"},
    {"{'a':{'dtype':'FP32','shape':[4,4],'data_offsets':[0,64]}}", 64, "'FP32'",
     "tensor 'a': unknown dtype 'FP32'; expected one of F64, F32, F16, BF16, F8_E4M3, F8_E5M2, "
     "I64, I32, I16, I8, U8, BOOL"},
    {"{'a':{'dtype':'torch.bfloat16','shape':[4,4],'data_offsets':[0,32]}}", 32, "'torch",
     "tensor 'a': unknown dtype 'torch.bfloat16'; expected one of F64, F32, F16, BF16, F8_E4M3, "
     "F8_E5M2, I64, I32, I16, I8, U8, BOOL"},
    {"{'a':{'dtype':'U16','shape':[4,4],'data_offsets':[0,32]}}", 32, "'U16'",
     "tensor 'a': unsupported dtype 'U16': a safetensors dtype dtypelint cannot represent yet "
     "(supported: F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I16, I8, U8, BOOL)"},
    {"{'a':{'dtype':'F8_E8M0','shape':[4],'data_offsets':[0,4]}}", 4, "'F8_E8M0'",
     "tensor 'a': unsupported dtype 'F8_E8M0': a safetensors dtype dtypelint cannot represent "
     "yet (supported: F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I16, I8, U8, BOOL)"},
    {"{'a':{'dtype':16,'shape':[4],'data_offsets':[0,4]}}", 4, "16",
     "tensor 'a': dtype: expected a string such as \"BF16\", found a number"},
    /* shapes */
    {"{'a':{'dtype':'BF16','shape':[-1,4],'data_offsets':[0,32]}}", 32, "-1",
     "tensor 'a': shape[0]: expected a non-negative integer, found -1"},
    {"{'a':{'dtype':'BF16','shape':[4,1.5],'data_offsets':[0,32]}}", 32, "1.5",
     "tensor 'a': shape[1]: expected a non-negative integer, found 1.5"},
    {"{'a':{'dtype':'BF16','shape':[4,4.0],'data_offsets':[0,32]}}", 32, "4.0",
     "tensor 'a': shape[1]: expected a non-negative integer, found 4.0"},
    {"{'a':{'dtype':'BF16','shape':[1e3],'data_offsets':[0,2000]}}", 2000, "1e3",
     "tensor 'a': shape[0]: expected a non-negative integer, found 1e3"},
    {"{'a':{'dtype':'BF16','shape':[1e400],'data_offsets':[0,2]}}", 2, "1e400",
     "tensor 'a': shape[0]: expected a non-negative integer, found 1e400"},
    {"{'a':{'dtype':'BF16','shape':[9007199254740993],'data_offsets':[0,2]}}", 2, "9007",
     "tensor 'a': shape[0]: 9007199254740993 is larger than 2^53, the largest integer "
     "dtypelint reads exactly"},
    {"{'a':{'dtype':'BF16','shape':[99999999999999999999999],'data_offsets':[0,2]}}", 2, "9999",
     "tensor 'a': shape[0]: 99999999999999999999999 is larger than 2^53, the largest integer "
     "dtypelint reads exactly"},
    {"{'a':{'dtype':'BF16','shape':['4'],'data_offsets':[0,8]}}", 8, "'4'",
     "tensor 'a': shape[0]: expected a non-negative integer, found a string"},
    {"{'a':{'dtype':'BF16','shape':[04],'data_offsets':[0,8]}}", 8, "04",
     "tensor 'a': shape[0]: invalid JSON number 04"},
    {"{'a':{'dtype':'BF16','shape':[-],'data_offsets':[0,8]}}", 8, "-",
     "tensor 'a': shape[0]: invalid JSON number -"},
    {"{'a':{'dtype':'BF16','shape':[4,],'data_offsets':[0,8]}}", 8, ",|]",
     "tensor 'a': shape[1]: expected a non-negative integer, found ']'"},
    {"{'a':{'dtype':'BF16','shape':4,'data_offsets':[0,8]}}", 8, "4,",
     "tensor 'a': shape: expected a list of non-negative integers, found a number"},
    {"{'a':{'dtype':'BF16','shape':[4294967296,4294967296],'data_offsets':[0,8]}}", 8,
     "[4294967296", "tensor 'a': shape [4294967296, 4294967296] has more than 2^63 - 1 elements"},
    {"{'a':{'dtype':'F64','shape':[9007199254740992,512],'data_offsets':[0,8]}}", 8,
     "[9007199254740992",
     "tensor 'a': shape [9007199254740992, 512] of F64 needs more than 2^64 bytes"},
    {"{'a':{'dtype':'U8','shape':[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],'data_offsets':[0,1]}}", 1,
     "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,|1]",
     "tensor 'a': shape has more than 16 dimensions (limits.max_rank)"},
    /* data_offsets */
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[0]}}", 32, "0|]",
     "tensor 'a': data_offsets: expected ',' then the end offset, found ']'"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[0, ]}}", 32, "0, |]",
     "tensor 'a': data_offsets: expected 2 integers [begin, end], found 1"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[0,32,64]}}", 32, "32|,",
     "tensor 'a': data_offsets: expected 2 integers [begin, end], found more"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[32,0]}}", 32, "[32",
     "tensor 'a': data_offsets [32, 0]: begin is after end"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[-8,24]}}", 32, "-8",
     "tensor 'a': data_offsets[0]: expected a non-negative integer, found -8"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[0,32.0]}}", 32, "32.0",
     "tensor 'a': data_offsets[1]: expected a non-negative integer, found 32.0"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':'0,32'}}", 32, "'0,32'",
     "tensor 'a': data_offsets: expected a list [begin, end] of two non-negative integers, "
     "found a string"},
    {"{'x.weight':{'dtype':'BF16','shape':[4,4],'data_offsets':[0,10]}}", 10, "[0,10]",
     "tensor 'x.weight': data_offsets [0, 10] span 10 bytes but shape [4, 4] of BF16 needs 32"},
    {"{" T_A "}", 16, "[0,32]",
     "tensor 'a': data_offsets [0, 32] end past the data section, which has 16 bytes (file "
     "size {F} - 8 - header {N})"},
    /* missing and duplicate keys */
    {"{'a':{'dtype':'F32','shape':[]}}", 0, "{'dtype'",
     "tensor 'a': missing \"data_offsets\" (each tensor needs dtype, shape and data_offsets)"},
    {"{'a':{}}", 0, "{}",
     "tensor 'a': missing \"dtype\" (each tensor needs dtype, shape and data_offsets)"},
    {"{" T_A ",'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[32,64]}}", 64, "},|'a'",
     "duplicate tensor name 'a' (first at column 10; the format forbids duplicate keys)"},
    {"{" T_A ",'\\u0061':{'dtype':'BF16','shape':[4,4],'data_offsets':[32,64]}}", 64, "'\\u",
     "duplicate tensor name 'a' (first at column 10; the format forbids duplicate keys)"},
    {"{'a':{'dtype':'BF16','dtype':'F32','shape':[4,4],'data_offsets':[0,32]}}", 32,
     "',|'dtype':'F32'", "tensor 'a': duplicate key 'dtype' (the format forbids duplicate keys)"},
    {"{'__metadata__':{},'__metadata__':{}}", 0, ",|'__",
     "duplicate key '__metadata__' (first at column 10; the format forbids duplicate keys)"},
    {"{'__metadata__':{'k':'1','k':'2'}}", 0, ",|'k'",
     "__metadata__: duplicate key 'k' (first at column 26; the format forbids duplicate keys)"},
    /* __metadata__ */
    {"{'__metadata__':{'format':1}}", 0, "1",
     "__metadata__: value of 'format': expected a string (the format allows only string "
     "values), found a number"},
    {"{'__metadata__':{'cfg':{'a':'b'}}}", 0, ":|{'a'",
     "__metadata__: value of 'cfg': expected a string (the format allows only string values), "
     "found an object"},
    {"{'__metadata__':['pt']}", 0, "[",
     "__metadata__: expected an object of string values, found an array"},
    /* coverage of the data section */
    {"{" T_A ",'b':{'dtype':'BF16','shape':[16],'data_offsets':[16,48]}}", 48, "[16,48]",
     "tensor 'b': data_offsets [16, 48] overlap tensor 'a' at [0, 32]"},
    {"{'b':{'dtype':'BF16','shape':[4,4],'data_offsets':[0,32]}," T_A "}", 32, "[0,32]}}",
     "tensor 'a': data_offsets [0, 32] overlap tensor 'b' at [0, 32]"},
    {"{" T_A ",'z':{'dtype':'BF16','shape':[0],'data_offsets':[8,8]}}", 32, "[8,8]",
     "tensor 'z': data_offsets [8, 8] overlap tensor 'a' at [0, 32]"},
    {"{" T_A ",'b':{'dtype':'BF16','shape':[16],'data_offsets':[40,72]}}", 72, "[40,72]",
     "bytes [32, 40) of the data section belong to no tensor: 'a' ends at 32 and 'b' starts at "
     "40 (the format forbids holes)"},
    {"{'a':{'dtype':'BF16','shape':[4,4],'data_offsets':[8,40]}}", 40, "[8,40]",
     "bytes [0, 8) of the data section belong to no tensor: the first tensor by offset, 'a', "
     "starts at 8 (the format forbids holes)"},
    {"{" T_A "}", 64, "[0,32]",
     "bytes [32, 64) at the end of the data section belong to no tensor: the last tensor by "
     "offset, 'a', ends at 32 (file size {F} - 8 - header {N} = 64 bytes of data; the format "
     "forbids holes)"},
    {"{}", 16, "{",
     "the header declares no tensors but the data section has 16 bytes (file size {F} - 8 - "
     "header {N}; the format forbids unindexed bytes)"},
    /* unknown keys are skipped, but still must be JSON, and not too deep */
    {"{'a':{'x':[1,,2],'dtype':'U8','shape':[1],'data_offsets':[0,1]}}", 1, ",|,2",
     "tensor 'a': expected a JSON value, found ','"},
    {"{'a':{'x':tru,'dtype':'U8','shape':[1],'data_offsets':[0,1]}}", 1, "tru",
     "tensor 'a': expected a JSON value, found 't'"},
    {"{'a':{'x':1.e5,'dtype':'U8','shape':[1],'data_offsets':[0,1]}}", 1, "1.e5",
     "tensor 'a': invalid JSON number 1."},
    /* names in messages are escaped and cut */
    {"{'a\\nb\\u0027c':{'dtype':'BF16','shape':[4],'data_offsets':[0,2]}}", 2, "[0,2]",
     "tensor 'a\\x0ab\\'c': data_offsets [0, 2] span 2 bytes but shape [4] of BF16 needs 8"},
};

static const char *expand(const char *message, size_t header_len, uint64_t file_size)
{
	static char out[1024];
	size_t o = 0;

	for (const char *c = message; *c && o < sizeof(out) - 32;) {
		if (!strncmp(c, "{N}", 3)) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%zu", header_len);
			c += 3;
		} else if (!strncmp(c, "{F}", 3)) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%" PRIu64, file_size);
			c += 3;
		} else {
			out[o++] = *c++;
		}
	}
	out[o] = '\0';
	return out;
}

START_TEST(test_malicious)
{
	const struct bad_case *c = &bad_cases[_i];
	const char *text = json(c->text);
	size_t len = strlen(text);
	char name[32];
	uint32_t column = 1;
	struct dtl_safetensors_header header;
	struct dtl_error error;

	snprintf(name, sizeof(name), "bad-%d.safetensors", _i);
	const char *path = write_st(name, text, len, c->data_size);
	if (c->at && !strcmp(c->at, "$")) {
		column = (uint32_t)len + 9;
	} else if (c->at) {
		char *marker = json(c->at);
		char *bar = strchr(marker, '|');
		size_t skip = 0;
		if (bar) {
			skip = (size_t)(bar - marker);
			memmove(bar, bar + 1, strlen(bar));
		}
		const char *found = strstr(text, marker);
		ck_assert_msg(found, "case %d: marker %s not in %s", _i, c->at, text);
		column = (uint32_t)(found - text + skip) + 9;
	}
	char message[1100];
	snprintf(message, sizeof(message), "safetensors header: %s",
	         expand(c->message, len, 8 + len + c->data_size));
	int rc = read_file(path, &header, &error);
	ck_assert_msg(rc == -EINVAL, "case %d (%s): rc %d", _i, c->text, rc);
	ck_assert_msg(!strcmp(error.message, message), "case %d: got\n  %s\nexpected\n  %s", _i,
	              error.message, message);
	ck_assert_msg(error.loc.line == 1 && error.loc.column == column,
	              "case %d: got %u:%u, expected 1:%u", _i, error.loc.line, error.loc.column,
	              column);
	ck_assert_str_eq(error.loc.file, path);

	/* the in-memory parser says the same */
	struct dtl_error error2;
	ck_assert_int_eq(dtl_safetensors_parse_header(path, (const unsigned char *)text, len,
	                                              8 + len + c->data_size, &limits, &arena,
	                                              &header, &error2),
	                 -EINVAL);
	ck_assert_str_eq(error2.message, error.message);
	ck_assert_uint_eq(error2.loc.column, error.loc.column);
}
END_TEST

START_TEST(test_limits)
{
	struct dtl_safetensors_header header;
	struct dtl_error error;
	const char *three = "{'a':{'dtype':'U8','shape':[1],'data_offsets':[0,1]},"
	                    "'bb':{'dtype':'U8','shape':[1],'data_offsets':[1,2]},"
	                    "'0123456789':{'dtype':'U8','shape':[1],'data_offsets':[2,3]}}";
	const char *path = write_json("three.safetensors", three, 3);
	const char *text = json(three);
	uint32_t column = (uint32_t)(strstr(text, "\"0123") - text) + 9;

	limits.max_tensors = 2;
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, column,
	             "safetensors header: more than 2 tensors (limits.max_tensors)");
	dtl_limits_default(&limits);
	limits.max_name_length = 9;
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, column,
	             "safetensors header: tensor name of 10 bytes is longer than 9 bytes "
	             "(limits.max_name_length)");
	dtl_limits_default(&limits);
	limits.max_safetensors_header = 16;
	char message[256];
	snprintf(message, sizeof(message), "%s",
	         "safetensors header: length prefix names a header longer than the limit of 16 "
	         "bytes (limits.max_safetensors_header)");
	assert_error(read_file(path, &header, &error), &error, path, -EINVAL, 1, 1, message);

	/* a nesting bomb in a key the format ignores */
	dtl_limits_default(&limits);
	char *deep = dtl_arena_alloc(&arena, 4096);
	size_t o = (size_t)sprintf(deep, "{\"a\":{\"x\":");
	for (int k = 0; k < 1000; k++)
		deep[o++] = '[';
	for (int k = 0; k < 1000; k++)
		deep[o++] = ']';
	o += (size_t)sprintf(deep + o, ",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}");
	path = write_st("deep.safetensors", deep, o, 1);
	/* the header and the entry are 2 levels: the 63rd '[' is the 65th */
	assert_error(
	    read_file(path, &header, &error), &error, path, -EINVAL, 1, 10 + 62 + 9,
	    "safetensors header: tensor 'a': nesting deeper than 64 levels (limits.max_depth)");
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-safetensors-registered.h"

static void add_tests(TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_malicious, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("safetensors")
