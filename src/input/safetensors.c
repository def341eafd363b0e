/* SPDX-License-Identifier: MIT */
/*
 * The safetensors header reader: the first 8 + N bytes of a file, never its tensor data.
 *
 * The rules, and where they come from (huggingface/safetensors, README.md "Format" and
 * safetensors/src/tensor.rs at commit 24b0b2857fef49be734b9ab72ce97c09bb25f5b9):
 *  - 8 bytes N, unsigned little-endian 64-bit; then N bytes of UTF-8 JSON (read_metadata():
 *    HeaderTooSmall, InvalidHeaderLength when 8 + N passes the end, InvalidHeader for bad
 *    UTF-8). The reference caps N at MAX_HEADER_SIZE = 100_000_000; we cap it at
 *    limits->max_safetensors_header.
 *  - README: "The header data MUST begin with a `{` character", "MAY be trailing padded with
 *    whitespace (0x20)" (we accept the JSON whitespace serde_json accepts after the value).
 *  - README: "A special key `__metadata__` is allowed to contain free form string-to-string
 *    map. Arbitrary JSON is not allowed, all values must be strings." (HashMetadata:
 *    Option<HashMap<String, String>>, so null means absent.)
 *  - README: "Duplicate keys are disallowed. Not all parsers may respect this."
 *  - TensorInfo { dtype, shape: Vec<usize>, data_offsets: (usize, usize) }: all three
 *    required, integers only (serde refuses 4.0 or 1e3 for a usize), other keys ignored.
 *  - Metadata::validate(): tensors sorted by data_offsets must start at 0 and each must start
 *    where the previous one ended (`if s != start || e < s` -> InvalidOffset), the size must
 *    be numel * bitsize / 8 with overflow-checked products (TensorInvalidInfo,
 *    ValidationOverflow); read_metadata() then requires the last end to be the end of the
 *    file (`buffer_end + N_LEN + n != buffer_len` -> MetadataIncompleteBuffer). README: "The
 *    byte buffer needs to be entirely indexed, and cannot contain holes."
 *  - Dtype enum: BOOL F4 F6_E2M3 F6_E3M2 U8 I8 F8_E5M2 F8_E4M3 F8_E8M0 F8_E4M3FNUZ F8_E5M2FNUZ
 *    I16 U16 F16 BF16 I32 U32 F32 C64 F64 I64 U64. Those enum dtl_dtype lacks are rejected
 *    with an "unsupported dtype" error (see st_dtypes below).
 *
 * The JSON is parsed here rather than with cJSON: errors must point at the byte that is wrong,
 * integers must be read exactly (cJSON reads numbers as double: 4.0, 1e3 and 2^53 + 1 would
 * pass), duplicate keys and U+0000 in strings must be caught, and cJSON skips any byte below
 * 0x21 as whitespace. The grammar is RFC 8259's, as strict as serde_json's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtypelint/input/safetensors.h"
#include "dtypelint/input/source.h"

#define PREFIX_LEN  DTL_SAFETENSORS_PREFIX_LEN
#define MAX_INTEGER ((uint64_t)1 << 53) /* shape and offsets stay exact as JSON doubles */

struct st_dtype {
	const char *name;
	bool supported; /* false: a safetensors dtype enum dtl_dtype cannot represent */
};

/* Supported ones map through dtl_dtype_parse(), which knows the safetensors spellings. */
static const struct st_dtype st_dtypes[] = {
    {"F64", true},      {"F32", true},          {"F16", true},          {"BF16", true},
    {"F8_E4M3", true},  {"F8_E5M2", true},      {"I64", true},          {"I32", true},
    {"I16", true},      {"I8", true},           {"U8", true},           {"BOOL", true},
    {"U64", false},     {"U32", false},         {"U16", false},         {"C64", false},
    {"F8_E8M0", false}, {"F8_E4M3FNUZ", false}, {"F8_E5M2FNUZ", false}, {"F6_E2M3", false},
    {"F6_E3M2", false}, {"F4", false},
};
#define N_DTYPES       (sizeof(st_dtypes) / sizeof(st_dtypes[0]))
#define SUPPORTED_LIST "F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I16, I8, U8, BOOL"

const char *dtl_safetensors_dtype_name(enum dtl_dtype dtype)
{
	if (dtype == DTL_DTYPE_NONE)
		return NULL;
	for (size_t k = 0; k < N_DTYPES; k++) {
		if (st_dtypes[k].supported &&
		    dtl_dtype_parse(st_dtypes[k].name, strlen(st_dtypes[k].name)) == dtype)
			return st_dtypes[k].name;
	}
	return NULL;
}

/* ---- errors ---------------------------------------------------------------------------- */

static uint32_t column_of(size_t pos)
{
	uint64_t column = (uint64_t)pos + PREFIX_LEN + 1;
	return column > UINT32_MAX ? UINT32_MAX : (uint32_t)column;
}

static struct dtl_loc loc_at(const char *path, uint32_t line, uint32_t column)
{
	struct dtl_loc loc = {path, line, column};
	return loc;
}

static int prefix_error(struct dtl_error *error, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int prefix_error(struct dtl_error *error, const char *path, const char *fmt, ...)
{
	char message[DTL_ERROR_MESSAGE_MAX];
	va_list args;

	va_start(args, fmt);
	vsnprintf(message, sizeof(message), fmt, args);
	va_end(args);
	return dtl_error_set(error, loc_at(path, 1, 1), -EINVAL, "safetensors header: %s", message);
}

/* A name or string quoted for a message: 'text', control bytes, quote and backslash escaped,
 * cut at a character boundary after QUOTE_BUDGET bytes. */
#define QUOTE_BUDGET 100
struct quoted {
	char text[QUOTE_BUDGET + 16];
};

static const char *quote(struct quoted *q, const char *s, size_t len)
{
	size_t o = 0;

	q->text[o++] = '\'';
	for (size_t k = 0; k < len; k++) {
		unsigned char c = (unsigned char)s[k];
		if (o >= QUOTE_BUDGET && (c & 0xc0) != 0x80) {
			memcpy(q->text + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			snprintf(q->text + o, 5, "\\x%02x", c);
			o += 4;
		} else if (c == '\'' || c == '\\') {
			q->text[o++] = '\\';
			q->text[o++] = (char)c;
		} else {
			q->text[o++] = (char)c;
		}
	}
	q->text[o++] = '\'';
	q->text[o] = '\0';
	return q->text;
}

/* ---- the parser ------------------------------------------------------------------------ */

struct tensor_rec {
	struct dtl_safetensors_tensor t;
	size_t offsets_pos; /* where its data_offsets list starts, for coverage errors */
};

struct parser {
	const char *path;
	const unsigned char *p;
	size_t n;
	size_t i;
	const struct dtl_limits *limits;
	struct dtl_arena *arena;
	struct dtl_error *error;
	uint64_t file_size;
	uint64_t data_size;

	/* scratch, freed when parsing ends */
	struct tensor_rec *recs;
	size_t rec_count, rec_capacity;
	int64_t *dims;
	size_t dims_capacity;

	struct dtl_strmap names;         /* tensor name -> index in recs */
	struct dtl_strmap metadata_keys; /* metadata key -> byte position */
	struct dtl_vec metadata;         /* struct dtl_safetensors_metadata */
	bool has_metadata, seen_metadata;
	size_t metadata_pos;

	/* the tensor being parsed, quoted for messages only when one is needed */
	const char *cur_name;
	size_t cur_name_len;
	struct quoted cur_quoted;
	/* for the name maps, which are not needed once the header is checked */
	struct dtl_arena scratch;
};

static const char *tensor_name(struct parser *ps)
{
	return quote(&ps->cur_quoted, ps->cur_name, ps->cur_name_len);
}

static int fail(struct parser *ps, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct parser *ps, size_t pos, const char *fmt, ...)
{
	char message[DTL_ERROR_MESSAGE_MAX];
	va_list args;

	va_start(args, fmt);
	vsnprintf(message, sizeof(message), fmt, args);
	va_end(args);
	return dtl_error_set(ps->error, loc_at(ps->path, 1, column_of(pos)), -EINVAL,
	                     "safetensors header: %s", message);
}

static int oom(struct parser *ps)
{
	return dtl_error_set(ps->error, loc_at(ps->path, 0, 0), -ENOMEM,
	                     "safetensors header: out of memory");
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(struct parser *ps)
{
	while (ps->i < ps->n && is_ws(ps->p[ps->i]))
		ps->i++;
}

static int peek(const struct parser *ps)
{
	return ps->i < ps->n ? ps->p[ps->i] : -1;
}

static bool has_literal(const struct parser *ps, size_t pos, const char *literal)
{
	size_t len = strlen(literal);
	return ps->n - pos >= len && memcmp(ps->p + pos, literal, len) == 0;
}

/* What is at pos, for "found ..." in messages. */
static const char *describe(const struct parser *ps, size_t pos, char buf[32])
{
	if (pos >= ps->n)
		return "the end of the header";
	unsigned char c = ps->p[pos];
	switch (c) {
	case '{':
		return "an object";
	case '[':
		return "an array";
	case '"':
		return "a string";
	case 't':
		if (has_literal(ps, pos, "true"))
			return "true";
		break;
	case 'f':
		if (has_literal(ps, pos, "false"))
			return "false";
		break;
	case 'n':
		if (has_literal(ps, pos, "null"))
			return "null";
		break;
	case ' ':
	case '\t':
	case '\n':
	case '\r':
		return "whitespace";
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return "a number";
		break;
	}
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, 32, "'%c'", c);
	else
		snprintf(buf, 32, "byte 0x%02x", c);
	return buf;
}

/* Offset of the first byte that is not valid UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or n. */
static size_t find_invalid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		if (n - i >= 8) {
			uint64_t word;
			memcpy(&word, s + i, 8);
			if (!(word & UINT64_C(0x8080808080808080))) {
				i += 8;
				continue;
			}
		}
		unsigned char c = s[i];
		size_t need;
		unsigned char lo = 0x80, hi = 0xbf;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
		} else {
			return i;
		}
		if (n - i <= need)
			return i;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (size_t k = 2; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
		}
		i += need + 1;
	}
	return n;
}

static int hex4(const unsigned char *s, unsigned *ret)
{
	unsigned v = 0;

	for (int k = 0; k < 4; k++) {
		unsigned char c = s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*ret = v;
	return 0;
}

/* Finds the closing '"' of the string at ps->i: *ret_end is its position, *ret_escaped whether
 * the body holds a backslash. Control characters must be escaped. */
static int scan_string(struct parser *ps, const char *what, size_t *ret_end, bool *ret_escaped)
{
	size_t start = ps->i, j = start + 1;
	bool escaped = false;

	while (j < ps->n && ps->p[j] != '"') {
		unsigned char c = ps->p[j];
		if (c < 0x20)
			return fail(ps, j,
			            "control character U+%04X in %s: JSON requires it escaped", c,
			            what);
		if (c == '\\') {
			escaped = true;
			j++;
			if (j < ps->n && ps->p[j] < 0x20)
				continue; /* reported by the loop */
		}
		j++;
	}
	if (j >= ps->n)
		return fail(ps, start, "unterminated string (%s): the header ends before its '\"'",
		            what);
	*ret_end = j;
	*ret_escaped = escaped;
	return 0;
}

/* The byte a two-character escape such as '\n' stands for; 0 for '\u' and for none. */
static char simple_escape(unsigned char e)
{
	switch (e) {
	case '"':
	case '\\':
	case '/':
		return (char)e;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	}
	return 0;
}

/* The UTF-8 encoding of the code point cp (at most U+10FFFF) in utf8; returns its length. */
static size_t utf8_encode(unsigned cp, unsigned char utf8[4])
{
	if (cp < 0x80) {
		utf8[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		utf8[0] = (unsigned char)(0xc0 | (cp >> 6));
		utf8[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		utf8[0] = (unsigned char)(0xe0 | (cp >> 12));
		utf8[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		utf8[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	utf8[0] = (unsigned char)(0xf0 | (cp >> 18));
	utf8[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	utf8[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	utf8[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The code point of the '\uXXXX' escape at k (a surrogate pair takes two) in a string body that
 * ends at end; *ret_len is the escape's length in bytes. */
static int unicode_escape(struct parser *ps, const char *what, size_t k, size_t end,
                          unsigned *ret_cp, size_t *ret_len)
{
	unsigned cp, low;

	if (end - k < 6 || hex4(ps->p + k + 2, &cp) < 0)
		return fail(ps, k, "invalid escape in %s: '\\u' must be followed by 4 hex digits",
		            what);
	*ret_len = 6;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(ps, k, "lone UTF-16 surrogate \\u%04X in %s", cp, what);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (end - k < 12 || ps->p[k + 6] != '\\' || ps->p[k + 7] != 'u' ||
		    hex4(ps->p + k + 8, &low) < 0 || low < 0xdc00 || low > 0xdfff)
			return fail(ps, k, "lone UTF-16 surrogate \\u%04X in %s", cp, what);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
		*ret_len = 12;
	}
	if (cp == 0)
		return fail(ps, k, "U+0000 (\\u0000) in %s is not supported", what);
	*ret_cp = cp;
	return 0;
}

/* Decodes the escape at *k (a backslash) of a string body that ends at end, into out + *o when
 * out is not NULL; moves *k past the escape and *o past the bytes it stands for. */
static int decode_escape(struct parser *ps, const char *what, size_t *k, size_t end, char *out,
                         size_t *o)
{
	unsigned char e = ps->p[*k + 1];
	char simple = simple_escape(e);
	unsigned char utf8[4];
	size_t escape_len = 0, ulen;
	unsigned cp = 0;
	int rc;

	if (simple) {
		if (out)
			out[*o] = simple;
		*o += 1;
		*k += 2;
		return 0;
	}
	if (e != 'u') {
		char buf[32];
		if (e > 0x20 && e < 0x7f)
			snprintf(buf, sizeof(buf), "'\\%c'", e);
		else
			snprintf(buf, sizeof(buf), "'\\' followed by byte 0x%02x", e);
		return fail(ps, *k, "invalid escape %s in %s", buf, what);
	}
	rc = unicode_escape(ps, what, *k, end, &cp, &escape_len);
	if (rc < 0)
		return rc;
	ulen = utf8_encode(cp, utf8);
	if (out)
		memcpy(out + *o, utf8, ulen);
	*o += ulen;
	*k += escape_len;
	return 0;
}

/*
 * Parses the JSON string at ps->i (which must be '"'). With into == NULL it only validates.
 * Otherwise *ret points at the text: into the input when there are no escapes (*ret_owned =
 * false; not NUL-terminated), or at a decoded NUL-terminated copy in the arena into.
 */
static int parse_string(struct parser *ps, const char *what, struct dtl_arena *into,
                        const char **ret, size_t *ret_len, bool *ret_owned)
{
	size_t body = ps->i + 1, end = 0;
	bool escaped = false;
	int rc = scan_string(ps, what, &end, &escaped);

	if (rc < 0)
		return rc;
	ps->i = end + 1;
	if (!escaped) {
		if (into) {
			*ret = (const char *)ps->p + body;
			*ret_len = end - body;
			*ret_owned = false;
		}
		return 0;
	}

	/* Decoding never makes the text longer: \uXXXX (6 bytes) gives at most 3, a surrogate
	 * pair (12) gives 4. */
	char *out = NULL;
	size_t o = 0;
	if (into) {
		out = dtl_arena_alloc(into, end - body + 1);
		if (!out)
			return oom(ps);
	}
	for (size_t k = body; k < end;) {
		if (ps->p[k] != '\\') {
			if (out)
				out[o] = (char)ps->p[k];
			o++;
			k++;
			continue;
		}
		rc = decode_escape(ps, what, &k, end, out, &o);
		if (rc < 0)
			return rc;
	}
	if (out) {
		out[o] = '\0';
		*ret = out;
		*ret_len = o;
		*ret_owned = true;
	}
	return 0;
}

/* A string the caller keeps: always a NUL-terminated arena copy. */
static int parse_owned_string(struct parser *ps, const char *what, const char **ret,
                              size_t *ret_len)
{
	bool owned = false;
	int rc;

	*ret = NULL;
	*ret_len = 0;
	rc = parse_string(ps, what, ps->arena, ret, ret_len, &owned);
	if (rc < 0)
		return rc;
	if (!owned) {
		*ret = dtl_arena_strndup(ps->arena, *ret, *ret_len);
		if (!*ret)
			return oom(ps);
	}
	return 0;
}

/* text (not NUL-terminated) equals the string literal */
#define TEXT_IS(text, len, literal)                                                                \
	((len) == sizeof(literal) - 1 && memcmp((text), (literal), sizeof(literal) - 1) == 0)

enum number_status {
	NUMBER_OK,
	NUMBER_NONE,    /* not a number at all */
	NUMBER_INVALID, /* starts like one but breaks JSON's grammar */
	NUMBER_NEGATIVE,
	NUMBER_FRACTION, /* has a fraction or an exponent */
	NUMBER_TOO_LARGE,
};

/* Scans a JSON number at ps->i (RFC 8259 §6) and reads it as a non-negative integer <= 2^53.
 * *ret_start and *ret_len give its text. ps->i moves past it unless NUMBER_NONE. */
static enum number_status scan_number(struct parser *ps, uint64_t *ret, size_t *ret_start,
                                      size_t *ret_len)
{
	const unsigned char *p = ps->p;
	size_t n = ps->n, i = ps->i;
	bool negative = false, fraction = false, large = false;
	uint64_t value = 0;

	*ret_start = i;
	*ret_len = 0;
	if (i >= n || (p[i] != '-' && !(p[i] >= '0' && p[i] <= '9')))
		return NUMBER_NONE;
	if (p[i] == '-') {
		negative = true;
		i++;
	}
	enum number_status status = NUMBER_OK;
	if (i >= n || !(p[i] >= '0' && p[i] <= '9')) {
		status = NUMBER_INVALID;
	} else if (p[i] == '0' && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9') {
		status = NUMBER_INVALID; /* leading zero */
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	} else {
		while (i < n && p[i] >= '0' && p[i] <= '9') {
			if (value > MAX_INTEGER)
				large = true;
			else
				value = value * 10 + (p[i] - '0');
			i++;
		}
		if (value > MAX_INTEGER)
			large = true;
		if (i < n && p[i] == '.') {
			fraction = true;
			i++;
			if (i >= n || !(p[i] >= '0' && p[i] <= '9'))
				status = NUMBER_INVALID;
			while (i < n && p[i] >= '0' && p[i] <= '9')
				i++;
		}
		if (status == NUMBER_OK && i < n && (p[i] == 'e' || p[i] == 'E')) {
			fraction = true;
			i++;
			if (i < n && (p[i] == '+' || p[i] == '-'))
				i++;
			if (i >= n || !(p[i] >= '0' && p[i] <= '9'))
				status = NUMBER_INVALID;
			while (i < n && p[i] >= '0' && p[i] <= '9')
				i++;
		}
	}
	*ret_len = i - *ret_start;
	ps->i = i;
	if (status != NUMBER_OK)
		return status;
	if (negative)
		return NUMBER_NEGATIVE;
	if (fraction)
		return NUMBER_FRACTION;
	if (large)
		return NUMBER_TOO_LARGE;
	*ret = value;
	return NUMBER_OK;
}

/* Reads a non-negative integer, or fails with "tensor <name>: <field>[<index>]: ..." (the
 * context is only formatted on failure: this runs for every dimension of every tensor). */
static int parse_uint(struct parser *ps, const char *field, unsigned index, uint64_t *ret)
{
	size_t start, len;
	char buf[32];
	enum number_status status = scan_number(ps, ret, &start, &len);
	int shown = len > 40 ? 40 : (int)len;
	const char *more = len > 40 ? "..." : "";
	const char *text = (const char *)ps->p + start;

	switch (status) {
	case NUMBER_OK:
		return 0;
	case NUMBER_NONE:
		return fail(ps, start,
		            "tensor %s: %s[%u]: expected a non-negative integer, found %s",
		            tensor_name(ps), field, index, describe(ps, start, buf));
	case NUMBER_INVALID:
		return fail(ps, start, "tensor %s: %s[%u]: invalid JSON number %.*s%s",
		            tensor_name(ps), field, index, shown, text, more);
	case NUMBER_NEGATIVE:
	case NUMBER_FRACTION:
		return fail(ps, start,
		            "tensor %s: %s[%u]: expected a non-negative integer, found %.*s%s",
		            tensor_name(ps), field, index, shown, text, more);
	case NUMBER_TOO_LARGE:
		return fail(ps, start,
		            "tensor %s: %s[%u]: %.*s%s is larger than 2^53, the largest integer "
		            "dtypelint reads exactly",
		            tensor_name(ps), field, index, shown, text, more);
	}
	return fail(ps, start, "tensor %s: %s[%u]: internal error", tensor_name(ps), field, index);
}

/* Skips any JSON value (unknown keys of a tensor entry). depth counts the enclosing
 * containers. */
static int skip_value(struct parser *ps, unsigned depth)
{
	char buf[32];
	size_t pos = ps->i;
	int c = peek(ps), rc;

	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		if (depth + 1 > ps->limits->max_depth)
			return fail(ps, pos,
			            "tensor %s: nesting deeper than %u levels (limits.max_depth)",
			            tensor_name(ps), ps->limits->max_depth);
		ps->i++;
		skip_ws(ps);
		if (peek(ps) == close) {
			ps->i++;
			return 0;
		}
		for (;;) {
			if (c == '{') {
				if (peek(ps) != '"')
					return fail(
					    ps, ps->i,
					    "tensor %s: expected a key (a JSON string), found %s",
					    tensor_name(ps), describe(ps, ps->i, buf));
				rc = parse_string(ps, "a key", NULL, NULL, NULL, NULL);
				if (rc < 0)
					return rc;
				skip_ws(ps);
				if (peek(ps) != ':')
					return fail(ps, ps->i,
					            "tensor %s: expected ':' after a key, found %s",
					            tensor_name(ps), describe(ps, ps->i, buf));
				ps->i++;
				skip_ws(ps);
			}
			rc = skip_value(ps, depth + 1);
			if (rc < 0)
				return rc;
			skip_ws(ps);
			if (peek(ps) == ',') {
				ps->i++;
				skip_ws(ps);
				continue;
			}
			if (peek(ps) == close) {
				ps->i++;
				return 0;
			}
			return fail(ps, ps->i, "tensor %s: expected ',' or '%c', found %s",
			            tensor_name(ps), close, describe(ps, ps->i, buf));
		}
	}
	if (c == '"')
		return parse_string(ps, "a string", NULL, NULL, NULL, NULL);
	if (c == '-' || (c >= '0' && c <= '9')) {
		uint64_t value;
		size_t start, len;
		if (scan_number(ps, &value, &start, &len) == NUMBER_INVALID)
			return fail(ps, start, "tensor %s: invalid JSON number %.*s",
			            tensor_name(ps), len > 40 ? 40 : (int)len,
			            (const char *)ps->p + start);
		return 0;
	}
	static const char *const literals[] = {"true", "false", "null"};
	for (size_t k = 0; k < 3; k++) {
		if (has_literal(ps, pos, literals[k])) {
			ps->i += strlen(literals[k]);
			return 0;
		}
	}
	return fail(ps, pos, "tensor %s: expected a JSON value, found %s", tensor_name(ps),
	            describe(ps, pos, buf));
}

static int parse_dtype(struct parser *ps, enum dtl_dtype *ret)
{
	char buf[32];
	size_t pos = ps->i;
	const char *text;
	size_t len;
	bool owned;
	struct quoted q;
	int rc;

	if (peek(ps) != '"')
		return fail(ps, pos,
		            "tensor %s: dtype: expected a string such as \"BF16\", found %s",
		            tensor_name(ps), describe(ps, pos, buf));
	rc = parse_string(ps, "a dtype", &ps->scratch, &text, &len, &owned);
	if (rc < 0)
		return rc;
	for (size_t k = 0; k < N_DTYPES; k++) {
		if (strlen(st_dtypes[k].name) != len || memcmp(text, st_dtypes[k].name, len) != 0)
			continue;
		if (!st_dtypes[k].supported)
			return fail(ps, pos,
			            "tensor %s: unsupported dtype '%s': a safetensors dtype "
			            "dtypelint cannot represent yet (supported: " SUPPORTED_LIST
			            ")",
			            tensor_name(ps), st_dtypes[k].name);
		*ret = dtl_dtype_parse(text, len);
		return 0;
	}
	const char *hint = "";
	for (size_t k = 0; k < N_DTYPES; k++) {
		if (strlen(st_dtypes[k].name) == len &&
		    strncasecmp(text, st_dtypes[k].name, len) == 0) {
			hint = st_dtypes[k].name;
			break;
		}
	}
	return fail(ps, pos,
	            "tensor %s: unknown dtype %s; expected one of " SUPPORTED_LIST "%s%s%s",
	            tensor_name(ps), quote(&q, text, len), *hint ? " (names are upper case: '" : "",
	            hint, *hint ? "')" : "");
}

static int parse_shape(struct parser *ps, uint32_t *ret_rank)
{
	char buf[32];
	uint32_t rank = 0;
	int rc;

	if (peek(ps) != '[')
		return fail(ps, ps->i,
		            "tensor %s: shape: expected a list of non-negative integers, found %s",
		            tensor_name(ps), describe(ps, ps->i, buf));
	ps->i++;
	skip_ws(ps);
	if (peek(ps) == ']') {
		ps->i++;
		*ret_rank = 0;
		return 0;
	}
	for (;;) {
		uint64_t dim;
		if (rank >= ps->limits->max_rank)
			return fail(
			    ps, ps->i,
			    "tensor %s: shape has more than %u dimensions (limits.max_rank)",
			    tensor_name(ps), ps->limits->max_rank);
		rc = parse_uint(ps, "shape", rank, &dim);
		if (rc < 0)
			return rc;
		if (rank >= ps->dims_capacity) {
			size_t capacity = ps->dims_capacity ? ps->dims_capacity * 2 : 16;
			int64_t *dims = realloc(ps->dims, capacity * sizeof(*dims));
			if (!dims)
				return oom(ps);
			ps->dims = dims;
			ps->dims_capacity = capacity;
		}
		ps->dims[rank++] = (int64_t)dim;
		skip_ws(ps);
		if (peek(ps) == ',') {
			ps->i++;
			skip_ws(ps);
			continue;
		}
		if (peek(ps) == ']') {
			ps->i++;
			*ret_rank = rank;
			return 0;
		}
		return fail(ps, ps->i, "tensor %s: shape: expected ',' or ']', found %s",
		            tensor_name(ps), describe(ps, ps->i, buf));
	}
}

static int parse_offsets(struct parser *ps, uint64_t offsets[2])
{
	char buf[32];
	size_t pos = ps->i;
	int rc;

	if (peek(ps) != '[')
		return fail(ps, pos,
		            "tensor %s: data_offsets: expected a list [begin, end] of two "
		            "non-negative integers, found %s",
		            tensor_name(ps), describe(ps, pos, buf));
	ps->i++;
	for (int k = 0; k < 2; k++) {
		skip_ws(ps);
		if (k == 1 && peek(ps) == ']')
			return fail(ps, ps->i,
			            "tensor %s: data_offsets: expected 2 integers [begin, end], "
			            "found 1",
			            tensor_name(ps));
		rc = parse_uint(ps, "data_offsets", (unsigned)k, &offsets[k]);
		if (rc < 0)
			return rc;
		skip_ws(ps);
		if (k == 0 && peek(ps) != ',')
			return fail(ps, ps->i,
			            "tensor %s: data_offsets: expected ',' then the end offset, "
			            "found %s",
			            tensor_name(ps), describe(ps, ps->i, buf));
		if (k == 0)
			ps->i++;
	}
	if (peek(ps) == ',')
		return fail(ps, ps->i,
		            "tensor %s: data_offsets: expected 2 integers [begin, end], found more",
		            tensor_name(ps));
	if (peek(ps) != ']')
		return fail(ps, ps->i, "tensor %s: data_offsets: expected ']', found %s",
		            tensor_name(ps), describe(ps, ps->i, buf));
	ps->i++;
	if (offsets[0] > offsets[1])
		return fail(ps, pos,
		            "tensor %s: data_offsets [%" PRIu64 ", %" PRIu64
		            "]: begin is after end",
		            tensor_name(ps), offsets[0], offsets[1]);
	return 0;
}

static const char *format_shape(char *buf, size_t size, const int64_t *shape, uint32_t rank)
{
	size_t o = 0;

	o += (size_t)snprintf(buf, size, "[");
	for (uint32_t k = 0; k < rank && o < size; k++)
		o += (size_t)snprintf(buf + o, size - o, "%s%" PRId64, k ? ", " : "", shape[k]);
	if (o < size)
		snprintf(buf + o, size - o, "]");
	if (o + 1 >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}

/* What a tensor's entry gave, as far as it has been read. */
struct tensor_fields {
	bool have_dtype, have_shape, have_offsets;
	enum dtl_dtype dtype;
	uint32_t rank; /* the shape is in ps->dims */
	uint64_t offsets[2];
	size_t shape_pos, offsets_pos;
};

/* One "key": value pair of a tensor's entry; unknown keys are skipped. */
static int parse_tensor_field(struct parser *ps, struct tensor_fields *tf)
{
	char buf[32];
	const char *key = NULL, *field = NULL;
	size_t key_len = 0, key_pos = ps->i;
	bool owned = false, *seen = NULL;
	int rc;

	if (peek(ps) != '"')
		return fail(ps, key_pos, "tensor %s: expected a key (a JSON string), found %s",
		            tensor_name(ps), describe(ps, key_pos, buf));
	rc = parse_string(ps, "a key", &ps->scratch, &key, &key_len, &owned);
	if (rc < 0)
		return rc;
	if (TEXT_IS(key, key_len, "dtype")) {
		seen = &tf->have_dtype;
		field = "dtype";
	} else if (TEXT_IS(key, key_len, "shape")) {
		seen = &tf->have_shape;
		field = "shape";
	} else if (TEXT_IS(key, key_len, "data_offsets")) {
		seen = &tf->have_offsets;
		field = "data_offsets";
	}
	if (seen && *seen)
		return fail(ps, key_pos,
		            "tensor %s: duplicate key '%s' (the format forbids duplicate keys)",
		            tensor_name(ps), field);
	skip_ws(ps);
	if (peek(ps) != ':')
		return fail(ps, ps->i, "tensor %s: expected ':' after a key, found %s",
		            tensor_name(ps), describe(ps, ps->i, buf));
	ps->i++;
	skip_ws(ps);
	if (seen == &tf->have_dtype) {
		rc = parse_dtype(ps, &tf->dtype);
	} else if (seen == &tf->have_shape) {
		tf->shape_pos = ps->i;
		rc = parse_shape(ps, &tf->rank);
	} else if (seen == &tf->have_offsets) {
		tf->offsets_pos = ps->i;
		rc = parse_offsets(ps, tf->offsets);
	} else {
		rc = skip_value(ps, 2); /* inside the header and the entry */
	}
	if (rc < 0)
		return rc;
	if (seen)
		*seen = true;
	return 0;
}

/* A tensor's entry: an object with dtype, shape and data_offsets, each once. */
static int parse_tensor_fields(struct parser *ps, struct tensor_fields *tf)
{
	char buf[32];
	size_t object_pos = ps->i;
	int rc;

	if (peek(ps) != '{')
		return fail(ps, object_pos,
		            "tensor %s: expected an object with \"dtype\", \"shape\" and "
		            "\"data_offsets\", found %s",
		            tensor_name(ps), describe(ps, object_pos, buf));
	ps->i++;
	skip_ws(ps);
	if (peek(ps) == '}')
		ps->i++;
	else
		for (;;) {
			rc = parse_tensor_field(ps, tf);
			if (rc < 0)
				return rc;
			skip_ws(ps);
			if (peek(ps) == ',') {
				ps->i++;
				skip_ws(ps);
				continue;
			}
			if (peek(ps) == '}') {
				ps->i++;
				break;
			}
			return fail(ps, ps->i, "tensor %s: expected ',' or '}', found %s",
			            tensor_name(ps), describe(ps, ps->i, buf));
		}

	const char *missing = !tf->have_dtype     ? "dtype"
	                      : !tf->have_shape   ? "shape"
	                      : !tf->have_offsets ? "data_offsets"
	                                          : NULL;
	if (missing)
		return fail(ps, object_pos,
		            "tensor %s: missing \"%s\" (each tensor needs dtype, shape and "
		            "data_offsets)",
		            tensor_name(ps), missing);
	return 0;
}

/* numel and byte size with overflow checks, folded in order as the reference does; the byte
 * size must be the span of data_offsets, which must end inside the data section. */
static int check_tensor_size(struct parser *ps, const struct tensor_fields *tf, int64_t *ret_numel)
{
	char shape_text[256];
	const uint64_t *offsets = tf->offsets;
	int64_t numel = 1;

	for (uint32_t k = 0; k < tf->rank; k++) {
		int64_t dim = ps->dims[k];
		if (dim != 0 && numel > INT64_MAX / dim)
			return fail(
			    ps, tf->shape_pos,
			    "tensor %s: shape %s has more than 2^63 - 1 elements", tensor_name(ps),
			    format_shape(shape_text, sizeof(shape_text), ps->dims, tf->rank));
		numel *= dim;
	}
	uint64_t itemsize = dtl_dtype_itemsize(tf->dtype);
	if ((uint64_t)numel > UINT64_MAX / itemsize)
		return fail(ps, tf->shape_pos,
		            "tensor %s: shape %s of %s needs more than 2^64 bytes", tensor_name(ps),
		            format_shape(shape_text, sizeof(shape_text), ps->dims, tf->rank),
		            dtl_safetensors_dtype_name(tf->dtype));
	uint64_t nbytes = (uint64_t)numel * itemsize;
	if (offsets[1] - offsets[0] != nbytes)
		return fail(ps, tf->offsets_pos,
		            "tensor %s: data_offsets [%" PRIu64 ", %" PRIu64 "] span %" PRIu64
		            " bytes but shape %s of %s needs %" PRIu64,
		            tensor_name(ps), offsets[0], offsets[1], offsets[1] - offsets[0],
		            format_shape(shape_text, sizeof(shape_text), ps->dims, tf->rank),
		            dtl_safetensors_dtype_name(tf->dtype), nbytes);
	if (offsets[1] > ps->data_size)
		return fail(ps, tf->offsets_pos,
		            "tensor %s: data_offsets [%" PRIu64 ", %" PRIu64
		            "] end past the data section, which has %" PRIu64
		            " bytes (file size %" PRIu64 " - 8 - header %zu)",
		            tensor_name(ps), offsets[0], offsets[1], ps->data_size, ps->file_size,
		            ps->n);
	*ret_numel = numel;
	return 0;
}

static int add_tensor(struct parser *ps, const char *name, size_t name_len, size_t name_pos,
                      const struct tensor_fields *tf, int64_t numel)
{
	if (ps->rec_count == ps->rec_capacity) {
		size_t capacity = ps->rec_capacity ? ps->rec_capacity * 2 : 64;
		struct tensor_rec *recs = realloc(ps->recs, capacity * sizeof(*recs));
		if (!recs)
			return oom(ps);
		ps->recs = recs;
		ps->rec_capacity = capacity;
	}
	struct tensor_rec *rec = &ps->recs[ps->rec_count++];
	memset(rec, 0, sizeof(*rec));
	rec->t.name = name;
	rec->t.name_len = name_len;
	rec->t.dtype = tf->dtype;
	rec->t.rank = tf->rank;
	if (tf->rank) {
		rec->t.shape = dtl_arena_calloc(ps->arena, tf->rank, sizeof(int64_t));
		if (!rec->t.shape)
			return oom(ps);
		memcpy(rec->t.shape, ps->dims, tf->rank * sizeof(int64_t));
	}
	rec->t.numel = numel;
	rec->t.begin = tf->offsets[0];
	rec->t.end = tf->offsets[1];
	rec->t.name_column = column_of(name_pos);
	rec->offsets_pos = tf->offsets_pos;
	return 0;
}

static int parse_tensor(struct parser *ps, const char *name, size_t name_len, size_t name_pos)
{
	struct tensor_fields tf = {.dtype = DTL_DTYPE_NONE};
	int64_t numel = 0;
	int rc;

	ps->cur_name = name;
	ps->cur_name_len = name_len;
	if ((rc = parse_tensor_fields(ps, &tf)) < 0 ||
	    (rc = check_tensor_size(ps, &tf, &numel)) < 0)
		return rc;
	return add_tensor(ps, name, name_len, name_pos, &tf, numel);
}

static int parse_metadata(struct parser *ps)
{
	char buf[32];
	struct quoted q;
	int rc;

	if (has_literal(ps, ps->i, "null")) {
		ps->i += 4;
		return 0;
	}
	if (peek(ps) != '{')
		return fail(ps, ps->i,
		            "__metadata__: expected an object of string values, found %s",
		            describe(ps, ps->i, buf));
	ps->has_metadata = true;
	ps->i++;
	skip_ws(ps);
	if (peek(ps) == '}') {
		ps->i++;
		return 0;
	}
	for (;;) {
		struct dtl_safetensors_metadata pair = {0};
		size_t key_pos = ps->i;
		if (peek(ps) != '"')
			return fail(ps, key_pos,
			            "__metadata__: expected a key (a JSON string), found %s",
			            describe(ps, key_pos, buf));
		rc = parse_owned_string(ps, "a metadata key", &pair.key, &pair.key_len);
		if (rc < 0)
			return rc;
		int64_t first =
		    dtl_strmap_put(&ps->metadata_keys, pair.key, pair.key_len, (int64_t)key_pos);
		if (first == -ENOMEM)
			return oom(ps);
		if ((size_t)first != key_pos)
			return fail(ps, key_pos,
			            "__metadata__: duplicate key %s (first at column %" PRIu32
			            "; the format forbids duplicate keys)",
			            quote(&q, pair.key, pair.key_len), column_of((size_t)first));
		skip_ws(ps);
		if (peek(ps) != ':')
			return fail(ps, ps->i, "__metadata__: expected ':' after a key, found %s",
			            describe(ps, ps->i, buf));
		ps->i++;
		skip_ws(ps);
		if (peek(ps) != '"')
			return fail(ps, ps->i,
			            "__metadata__: value of %s: expected a string (the format "
			            "allows only string values), found %s",
			            quote(&q, pair.key, pair.key_len), describe(ps, ps->i, buf));
		rc = parse_owned_string(ps, "a metadata value", &pair.value, &pair.value_len);
		if (rc < 0)
			return rc;
		struct dtl_safetensors_metadata *slot =
		    dtl_vec_push(&ps->metadata, ps->arena, sizeof(pair));
		if (!slot)
			return oom(ps);
		*slot = pair;
		skip_ws(ps);
		if (peek(ps) == ',') {
			ps->i++;
			skip_ws(ps);
			continue;
		}
		if (peek(ps) == '}') {
			ps->i++;
			return 0;
		}
		return fail(ps, ps->i, "__metadata__: expected ',' or '}', found %s",
		            describe(ps, ps->i, buf));
	}
}

static int parse_root(struct parser *ps)
{
	char buf[32];
	int rc;

	if (ps->p[0] != '{') {
		if (is_ws(ps->p[0]))
			return fail(ps, 0,
			            "expected '{' as the first byte of the header (the format "
			            "requires it), found whitespace");
		return fail(ps, 0, "expected a JSON object, found %s", describe(ps, 0, buf));
	}
	ps->i = 1;
	skip_ws(ps);
	if (peek(ps) == '}') {
		ps->i++;
	} else
		for (;;) {
			const char *name;
			size_t name_len, name_pos = ps->i;
			struct quoted q;
			if (peek(ps) != '"')
				return fail(ps, name_pos,
				            "expected a tensor name (a JSON string), found %s",
				            describe(ps, name_pos, buf));
			rc = parse_owned_string(ps, "a tensor name", &name, &name_len);
			if (rc < 0)
				return rc;
			skip_ws(ps);
			if (peek(ps) != ':')
				return fail(ps, ps->i, "expected ':' after %s, found %s",
				            quote(&q, name, name_len), describe(ps, ps->i, buf));
			ps->i++;
			skip_ws(ps);
			if (TEXT_IS(name, name_len, "__metadata__")) {
				if (ps->seen_metadata)
					return fail(ps, name_pos,
					            "duplicate key '__metadata__' (first at column "
					            "%" PRIu32
					            "; the format forbids duplicate keys)",
					            column_of(ps->metadata_pos));
				ps->seen_metadata = true;
				ps->metadata_pos = name_pos;
				rc = parse_metadata(ps);
			} else {
				if (name_len > ps->limits->max_name_length)
					return fail(ps, name_pos,
					            "tensor name of %zu bytes is longer than %zu "
					            "bytes (limits.max_name_length)",
					            name_len, ps->limits->max_name_length);
				if (ps->rec_count >= ps->limits->max_tensors)
					return fail(ps, name_pos,
					            "more than %zu tensors (limits.max_tensors)",
					            ps->limits->max_tensors);
				int64_t first = dtl_strmap_put(&ps->names, name, name_len,
				                               (int64_t)ps->rec_count);
				if (first == -ENOMEM)
					return oom(ps);
				if ((size_t)first != ps->rec_count)
					return fail(ps, name_pos,
					            "duplicate tensor name %s (first at column "
					            "%" PRIu32
					            "; the format forbids duplicate keys)",
					            quote(&q, name, name_len),
					            ps->recs[first].t.name_column);
				rc = parse_tensor(ps, name, name_len, name_pos);
			}
			if (rc < 0)
				return rc;
			skip_ws(ps);
			if (peek(ps) == ',') {
				ps->i++;
				skip_ws(ps);
				continue;
			}
			if (peek(ps) == '}') {
				ps->i++;
				break;
			}
			return fail(ps, ps->i,
			            "expected ',' or '}' after the entry of %s, found %s",
			            quote(&q, name, name_len), describe(ps, ps->i, buf));
		}
	skip_ws(ps);
	if (ps->i < ps->n)
		return fail(ps, ps->i,
		            "expected only whitespace padding after the header object, found %s",
		            describe(ps, ps->i, buf));
	return 0;
}

struct by_offset {
	uint64_t begin, end;
	size_t index;
};

static int compare_offsets(const void *a, const void *b)
{
	const struct by_offset *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Sorted by offset, the tensors must tile the data section exactly: the first starts at 0,
 * each starts where the previous ended, the last ends at the data section's end.
 * (huggingface/safetensors safetensors/src/tensor.rs: Metadata::validate() and
 * SafeTensors::read_metadata(); README "cannot contain holes".)
 */
static int check_coverage(struct parser *ps, size_t **ret_order)
{
	struct by_offset *sorted = NULL;
	size_t *order = NULL;
	uint64_t expected = 0;
	const struct tensor_rec *prev = NULL;
	struct quoted q1, q2;
	int rc = 0;

	*ret_order = NULL;
	if (ps->rec_count) {
		order = dtl_arena_calloc(ps->arena, ps->rec_count, sizeof(*order));
		sorted = malloc(ps->rec_count * sizeof(*sorted));
		if (!order || !sorted) {
			free(sorted);
			return oom(ps);
		}
	}
	for (size_t k = 0; k < ps->rec_count; k++) {
		sorted[k].begin = ps->recs[k].t.begin;
		sorted[k].end = ps->recs[k].t.end;
		sorted[k].index = k;
	}
	if (ps->rec_count > 1)
		qsort(sorted, ps->rec_count, sizeof(*sorted), compare_offsets);
	for (size_t k = 0; k < ps->rec_count; k++) {
		const struct tensor_rec *rec = &ps->recs[sorted[k].index];
		const struct dtl_safetensors_tensor *t = &rec->t;
		order[k] = sorted[k].index;
		if (t->begin > expected && !prev) {
			rc = fail(ps, rec->offsets_pos,
			          "bytes [0, %" PRIu64 ") of the data section belong to no tensor: "
			          "the first tensor by offset, %s, starts at %" PRIu64
			          " (the format forbids holes)",
			          t->begin, quote(&q1, t->name, t->name_len), t->begin);
			break;
		}
		if (t->begin > expected) {
			rc = fail(ps, rec->offsets_pos,
			          "bytes [%" PRIu64 ", %" PRIu64
			          ") of the data section belong to no "
			          "tensor: %s ends at %" PRIu64 " and %s starts at %" PRIu64
			          " (the format forbids holes)",
			          expected, t->begin, quote(&q1, prev->t.name, prev->t.name_len),
			          expected, quote(&q2, t->name, t->name_len), t->begin);
			break;
		}
		if (t->begin < expected) {
			rc = fail(ps, rec->offsets_pos,
			          "tensor %s: data_offsets [%" PRIu64 ", %" PRIu64
			          "] overlap tensor %s at [%" PRIu64 ", %" PRIu64 "]",
			          quote(&q1, t->name, t->name_len), t->begin, t->end,
			          quote(&q2, prev->t.name, prev->t.name_len), prev->t.begin,
			          prev->t.end);
			break;
		}
		expected = t->end;
		prev = rec;
	}
	if (rc == 0 && expected != ps->data_size) {
		if (!prev)
			rc = fail(ps, 0,
			          "the header declares no tensors but the data section has %" PRIu64
			          " bytes (file size %" PRIu64
			          " - 8 - header %zu; the format forbids unindexed bytes)",
			          ps->data_size, ps->file_size, ps->n);
		else
			rc = fail(
			    ps, prev->offsets_pos,
			    "bytes [%" PRIu64 ", %" PRIu64 ") at the end of the data section "
			    "belong to no tensor: the last tensor by offset, %s, ends at %" PRIu64
			    " (file size %" PRIu64 " - 8 - header %zu = %" PRIu64
			    " bytes of data; the format forbids holes)",
			    expected, ps->data_size, quote(&q1, prev->t.name, prev->t.name_len),
			    expected, ps->file_size, ps->n, ps->data_size);
	}
	free(sorted);
	if (rc == 0)
		*ret_order = order;
	return rc;
}

/* The prefix is printed only as "too long": a value that is no header length is 8 bytes of
 * some other file (a link to a secret named *.safetensors), and messages quote no file. */
static int check_lengths(const char *path, uint64_t header_len, uint64_t file_size,
                         const struct dtl_limits *limits, struct dtl_error *error)
{
	if (file_size < PREFIX_LEN)
		return prefix_error(
		    error, path, "file is %" PRIu64 " bytes, shorter than the 8-byte length prefix",
		    file_size);
	if (header_len == 0)
		return prefix_error(error, path,
		                    "length prefix is 0; expected the byte length of the JSON "
		                    "header that follows it");
	if (header_len > limits->max_safetensors_header)
		return prefix_error(error, path,
		                    "length prefix names a header longer than the limit of %zu "
		                    "bytes (limits.max_safetensors_header)",
		                    limits->max_safetensors_header);
	if (header_len > file_size - PREFIX_LEN)
		return prefix_error(error, path,
		                    "length prefix names a header longer than the %" PRIu64
		                    " bytes that follow it (file size %" PRIu64 ")",
		                    file_size - PREFIX_LEN, file_size);
	return 0;
}

int dtl_safetensors_parse_prefix(const char *path, const unsigned char prefix[PREFIX_LEN],
                                 uint64_t file_size, const struct dtl_limits *limits,
                                 uint64_t *ret_header_len, struct dtl_error *error)
{
	uint64_t n = 0;

	if (file_size >= PREFIX_LEN)
		for (int k = PREFIX_LEN - 1; k >= 0; k--)
			n = (n << 8) | prefix[k];
	int rc = check_lengths(path, n, file_size, limits, error);
	if (rc < 0)
		return rc;
	*ret_header_len = n;
	return 0;
}

int dtl_safetensors_parse_header(const char *path, const unsigned char *bytes, size_t header_len,
                                 uint64_t file_size, const struct dtl_limits *limits,
                                 struct dtl_arena *arena, struct dtl_safetensors_header *ret_header,
                                 struct dtl_error *error)
{
	struct parser ps = {
	    .path = path,
	    .p = bytes,
	    .n = header_len,
	    .limits = limits,
	    .arena = arena,
	    .error = error,
	    .file_size = file_size,
	};
	int rc;

	memset(ret_header, 0, sizeof(*ret_header));
	rc = check_lengths(path, header_len, file_size, limits, error);
	if (rc < 0)
		return rc;
	ps.data_size = file_size - PREFIX_LEN - header_len;

	size_t bad = find_invalid_utf8(bytes, header_len);
	if (bad < header_len) {
		unsigned char lead = bytes[bad];
		size_t len = lead < 0xc2 || lead > 0xf4 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
		char shown[24] = "";
		size_t o = 0;
		if (len > header_len - bad)
			len = header_len - bad;
		if (len == 1)
			return fail(&ps, bad,
			            "not valid UTF-8: byte 0x%02x cannot start a character", lead);
		for (size_t k = 0; k < len; k++)
			o += (size_t)snprintf(shown + o, sizeof(shown) - o, "%s0x%02x",
			                      k ? " " : "", bytes[bad + k]);
		return fail(&ps, bad, "not valid UTF-8: bytes %s do not form a character", shown);
	}

	dtl_arena_init(&ps.scratch);
	dtl_strmap_init(&ps.names, &ps.scratch);
	dtl_strmap_init(&ps.metadata_keys, &ps.scratch);
	rc = parse_root(&ps);
	size_t *order = NULL;
	if (rc == 0)
		rc = check_coverage(&ps, &order);
	if (rc == 0 && ps.rec_count) {
		ret_header->tensors =
		    dtl_arena_calloc(arena, ps.rec_count, sizeof(*ret_header->tensors));
		if (!ret_header->tensors)
			rc = oom(&ps);
		else
			for (size_t k = 0; k < ps.rec_count; k++)
				ret_header->tensors[k] = ps.recs[k].t;
	}
	if (rc == 0) {
		ret_header->tensor_count = ps.rec_count;
		ret_header->by_offset = order;
		ret_header->metadata = ps.metadata.items;
		ret_header->metadata_count = ps.metadata.count;
		ret_header->has_metadata = ps.has_metadata;
		ret_header->header_len = header_len;
		ret_header->data_size = ps.data_size;
		ret_header->file_size = file_size;
	}
	free(ps.recs);
	free(ps.dims);
	dtl_arena_fini(&ps.scratch);
	return rc;
}

/* ---- the file -------------------------------------------------------------------------- */

static int io_error(struct dtl_error *error, const char *path, int code, const char *what)
{
	return dtl_error_set(error, loc_at(path, 0, 0), code, "%s: %s", what, strerror(-code));
}

/* Reads exactly len bytes at offset; returns the count read (less at end of file) or -errno. */
static ssize_t read_at(int fd, void *buf, size_t len, uint64_t offset)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(offset + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

int dtl_safetensors_read_header(const char *path, const struct dtl_limits *limits,
                                struct dtl_arena *arena, struct dtl_safetensors_header *ret_header,
                                struct dtl_error *error)
{
	unsigned char prefix[PREFIX_LEN] = {0};
	unsigned char *bytes = NULL;
	struct stat st;
	uint64_t header_len, file_size;
	ssize_t got;
	int fd, rc;

	memset(ret_header, 0, sizeof(*ret_header));
	/* O_NONBLOCK: a FIFO must not block the open; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return io_error(error, path, -errno, "cannot open");
	if (fstat(fd, &st) < 0) {
		rc = io_error(error, path, -errno, "cannot stat");
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = dtl_error_set(error, loc_at(path, 0, 0), -EISDIR,
		                   "is a directory, not a safetensors file");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = dtl_error_set(error, loc_at(path, 0, 0), -EINVAL,
		                   "not a regular file, cannot be a safetensors file");
		goto out;
	}
	dtl_read_log_note(st.st_dev, st.st_ino); /* no output may replace it */
	file_size = (uint64_t)st.st_size;
	got = read_at(fd, prefix, file_size < PREFIX_LEN ? (size_t)file_size : PREFIX_LEN, 0);
	if (got < 0) {
		rc = io_error(error, path, (int)got, "cannot read");
		goto out;
	}
	if ((uint64_t)got < (file_size < PREFIX_LEN ? file_size : PREFIX_LEN))
		file_size = (uint64_t)got; /* it shrank since fstat(): judge what is there */
	rc = dtl_safetensors_parse_prefix(path, prefix, file_size, limits, &header_len, error);
	if (rc < 0)
		goto out;
	bytes = malloc((size_t)header_len);
	if (!bytes) {
		rc = dtl_error_set(
		    error, loc_at(path, 0, 0), -ENOMEM,
		    "safetensors header: out of memory for a %" PRIu64 "-byte header", header_len);
		goto out;
	}
	got = read_at(fd, bytes, (size_t)header_len, PREFIX_LEN);
	if (got < 0) {
		rc = io_error(error, path, (int)got, "cannot read");
		goto out;
	}
	if ((uint64_t)got < header_len) {
		rc = dtl_error_set(error, loc_at(path, 0, 0), -EIO,
		                   "safetensors header: the file ended after %zd of the %" PRIu64
		                   " header bytes (did it shrink while being read?)",
		                   got, header_len);
		goto out;
	}
	rc = dtl_safetensors_parse_header(path, bytes, (size_t)header_len, file_size, limits, arena,
	                                  ret_header, error);
out:
	free(bytes);
	close(fd);
	return rc;
}
