/* The .md lexer (re2c).  Newlines end items and fields except inside
 * ( ) and [ ]; '#' starts a comment. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mdgen.h"
#include "mdparse.h"
#include "util.h"

static Loc here(MdParser *p, const char *at)
{
	return loc_at(p->file, p->line, (int)(at - p->line_start) + 1);
}

static void set_loc(MdParser *p, MDLTYPE *l)
{
	l->first_line = l->last_line = p->line;
	l->first_column = (int)(p->tok - p->line_start) + 1;
	l->last_column = (int)(p->cur - p->line_start);
}

/* One more open ( [ or {.  Past MD_MAX_NEST the rest of the file is
 * skipped (the parser then sees its end, silently): no tree, and no walk
 * over it, is deeper than the limit allows. */
static bool open_nest(MdParser *p)
{
	if (++p->nest <= MD_MAX_NEST)
		return true;
	diag_error(p->d, here(p, p->tok), "nested deeper than %d levels of ( ), [ ] and { }", MD_MAX_NEST);
	p->stopped = true;
	p->cur = p->lim;
	return false;
}

/* A register-range bound: digits, at most MD_MAX_RANGE_BOUND. */
static int64_t range_bound(const char *s, bool *ok)
{
	int64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > MD_MAX_RANGE_BOUND) {
			*ok = false;
			return 0;
		}
	}
	return v;
}

/* Strings know \n, \t, \\ and \" (multi-line assembly templates). */
static char *unescape(MdParser *p, const char *s, const char *e)
{
	char *out = xmalloc((size_t)(e - s) + 1), *o = out;
	for (; s < e; s++) {
		if (*s != '\\') {
			*o++ = *s;
			continue;
		}
		s++;
		switch (*s) {
		case 'n': *o++ = '\n'; break;
		case 't': *o++ = '\t'; break;
		case '\\': *o++ = '\\'; break;
		case '"': *o++ = '"'; break;
		default:
			if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
				diag_error(p->d, here(p, s - 1), "unknown escape sequence '\\%c' in a string", *s);
			else
				diag_error(p->d, here(p, s - 1), "unknown escape sequence '\\' and byte 0x%02x in a string",
					   (unsigned char)*s);
			*o++ = *s;
		}
	}
	*o = 0;
	return out;
}

static int keyword(const char *s, size_t n)
{
	static const struct {
		const char *word;
		int tok;
	} kw[] = {
		{"target", TARGET}, {"extends", EXTENDS}, {"param", PARAM}, {"regclass", REGCLASS},
		{"abi", ABI}, {"form", FORM}, {"inst", INST}, {"class", CLASS}, {"foreach", FOREACH},
		{"in", IN}, {"legal", LEGAL}, {"match", MATCH}, {"when", WHEN},
	};
	for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
		if (strlen(kw[i].word) == n && memcmp(kw[i].word, s, n) == 0)
			return kw[i].tok;
	return 0;
}

int mdlex(MDSTYPE *lval, MDLTYPE *lloc, MdParser *p)
{
	const char *YYMARKER;
	for (;;) {
		p->tok = p->cur;
		/*!re2c
		re2c:api:style = free-form;
		re2c:define:YYCTYPE = "unsigned char";
		re2c:define:YYCURSOR = "p->cur";
		re2c:define:YYLIMIT = "p->lim";
		re2c:yyfill:enable = 0;

		digit = [0-9];
		ident = [a-zA-Z_][a-zA-Z0-9_.]*;
		int = "-"? digit+;
		exp = [eE] [+-]? digit+;
		float = "-"? (digit+ "." digit+ exp? | digit+ exp);

		"\x00" {
			if (p->cur - 1 < p->lim) {
				diag_error(p->d, here(p, p->tok), "NUL byte in the file");
				continue;
			}
			p->cur--;
			set_loc(p, lloc);
			return END;
		}
		[ \t\r]+ { continue; }
		"#" [^\n\x00]* { continue; }
		"\n" {
			int nl = p->depth == 0;
			p->tok = p->cur - 1;
			set_loc(p, lloc);
			p->line++;
			p->line_start = p->cur;
			if (nl)
				return NL;
			continue;
		}
		"(" { if (!open_nest(p)) continue; p->depth++; set_loc(p, lloc); return '('; }
		"[" { if (!open_nest(p)) continue; p->depth++; set_loc(p, lloc); return '['; }
		"{" { if (!open_nest(p)) continue; set_loc(p, lloc); return '{'; }
		")" { if (p->depth) p->depth--; if (p->nest) p->nest--; set_loc(p, lloc); return ')'; }
		"]" { if (p->depth) p->depth--; if (p->nest) p->nest--; set_loc(p, lloc); return ']'; }
		"}" { if (p->nest) p->nest--; set_loc(p, lloc); return '}'; }
		"==" { set_loc(p, lloc); return EQ; }
		"!=" { set_loc(p, lloc); return NE; }
		"<=" { set_loc(p, lloc); return LE; }
		">=" { set_loc(p, lloc); return GE; }
		"&&" { set_loc(p, lloc); return AND; }
		"||" { set_loc(p, lloc); return OR; }
		[=:,<>!+*/%-] { set_loc(p, lloc); return p->tok[0]; }
		int {
			set_loc(p, lloc);
			errno = 0;
			lval->num.ival = strtoll(p->tok, NULL, 10);
			lval->num.f = (double)lval->num.ival;
			lval->num.is_int = true;
			if (errno == ERANGE)
				diag_error(p->d, here(p, p->tok), "integer '%.*s' does not fit in 64 bits",
					   (int)(p->cur - p->tok), p->tok);
			return NUM;
		}
		float {
			set_loc(p, lloc);
			char *tmp = xstrndup(p->tok, (size_t)(p->cur - p->tok));
			lval->num.f = strtod(tmp, NULL);
			lval->num.ival = 0;
			lval->num.is_int = false;
			free(tmp);
			if (!isfinite(lval->num.f)) {
				diag_error(p->d, here(p, p->tok), "number '%.*s' is too large", (int)(p->cur - p->tok), p->tok);
				lval->num.f = 0;
			}
			return NUM;
		}
		ident "{" digit+ ".." digit+ "}" {
			set_loc(p, lloc);
			const char *brace = memchr(p->tok, '{', (size_t)(p->cur - p->tok));
			lval->range.name = xstrndup(p->tok, (size_t)(brace - p->tok));
			bool ok = true;
			lval->range.lo = range_bound(brace + 1, &ok);
			lval->range.hi = range_bound(strstr(brace, "..") + 2, &ok);
			if (!ok) {
				diag_error(p->d, here(p, p->tok), "register range '%.*s' has a bound above %d",
					   (int)(p->cur - p->tok), p->tok, MD_MAX_RANGE_BOUND);
				lval->range.lo = lval->range.hi = 0;
			} else if (lval->range.hi < lval->range.lo || lval->range.hi - lval->range.lo >= MD_MAX_NAMES) {
				diag_error(p->d, here(p, p->tok), "bad register range '%.*s' (low <= high, at most %d registers)",
					   (int)(p->cur - p->tok), p->tok, MD_MAX_NAMES);
				lval->range.hi = lval->range.lo;
			}
			return RANGE;
		}
		ident {
			set_loc(p, lloc);
			int k = keyword(p->tok, (size_t)(p->cur - p->tok));
			if (k)
				return k;
			lval->s = xstrndup(p->tok, (size_t)(p->cur - p->tok));
			return IDENT;
		}
		"$" ident {
			set_loc(p, lloc);
			lval->s = xstrndup(p->tok + 1, (size_t)(p->cur - p->tok - 1));
			return VAR;
		}
		"\"" ([^"\\\n\x00] | "\\" [^\n\x00])* "\"" {
			set_loc(p, lloc);
			lval->s = unescape(p, p->tok + 1, p->cur - 1);
			return STRING;
		}
		"\"" ([^"\\\n\x00] | "\\" [^\n\x00])* {
			diag_error(p->d, here(p, p->tok), "unterminated string");
			set_loc(p, lloc);
			lval->s = unescape(p, p->tok + 1, p->cur);
			return STRING;
		}
		* {
			unsigned char c = (unsigned char)p->tok[0];
			if (c >= 0x20 && c < 0x7f)
				diag_error(p->d, here(p, p->tok), "unexpected character '%c'", c);
			else
				diag_error(p->d, here(p, p->tok), "unexpected byte 0x%02x", c);
			continue;
		}
		*/
	}
}
