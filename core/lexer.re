/* model.ir lexer (re2c).  Tokens carry their location; newlines are
 * statement ends except inside ( ) and [ ], where a statement may go on
 * over several lines.  Comments run from '#' to the end of the line. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "parser.h"
#include "util.h"

static Loc here(Parser *p, const char *at)
{
	Loc l = {p->file, p->line, (int)(at - p->line_start) + 1};
	return l;
}

static void set_loc(Parser *p, YYLTYPE *lloc)
{
	lloc->first_line = lloc->last_line = p->line;
	lloc->first_column = (int)(p->tok - p->line_start) + 1;
	lloc->last_column = (int)(p->cur - p->line_start);
}

static char *unescape(Parser *p, const char *s, const char *e)
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
			diag_error(p->d, here(p, s - 1), "unknown escape sequence '\\%c' in string", *s);
			*o++ = *s;
		}
	}
	*o = 0;
	return out;
}

int yylex(YYSTYPE *lval, YYLTYPE *lloc, Parser *p)
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
		float = "-"? (digit+ "." digit* exp? | "." digit+ exp? | digit+ exp | "inf" | "nan");
		bad_number = "-"? digit [a-zA-Z0-9_.]*;

		"\x00" {
			if (p->cur - 1 < p->lim) {
				diag_error(p->d, here(p, p->tok), "NUL byte in the model text");
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
		"graph"  { set_loc(p, lloc); return GRAPH; }
		"input"  { set_loc(p, lloc); return INPUT; }
		"output" { set_loc(p, lloc); return OUTPUT; }
		"const"  { set_loc(p, lloc); return CONST; }
		"(" { p->depth++; set_loc(p, lloc); return '('; }
		"[" { p->depth++; set_loc(p, lloc); return '['; }
		")" { if (p->depth) p->depth--; set_loc(p, lloc); return ')'; }
		"]" { if (p->depth) p->depth--; set_loc(p, lloc); return ']'; }
		[{}=:,] { set_loc(p, lloc); return p->tok[0]; }
		int {
			set_loc(p, lloc);
			errno = 0;
			lval->i = strtoll(p->tok, NULL, 10);
			if (errno == ERANGE)
				diag_error(p->d, here(p, p->tok), "integer '%.*s' does not fit in 64 bits",
					   (int)(p->cur - p->tok), p->tok);
			return INT;
		}
		float {
			set_loc(p, lloc);
			char *tmp = xstrndup(p->tok, (size_t)(p->cur - p->tok));
			errno = 0;
			lval->f = strtod(tmp, NULL);
			/* overflow (1e999999) is an error; underflow to 0 or a
			 * subnormal is the nearest double, as in C */
			if (errno == ERANGE && (lval->f == HUGE_VAL || lval->f == -HUGE_VAL))
				diag_error(p->d, here(p, p->tok), "number '%s' does not fit in a 64-bit float", tmp);
			free(tmp);
			return FLOAT;
		}
		bad_number {
			diag_error(p->d, here(p, p->tok), "malformed number '%.*s'", (int)(p->cur - p->tok), p->tok);
			set_loc(p, lloc);
			lval->i = 0;
			return INT;
		}
		ident {
			set_loc(p, lloc);
			lval->s = xstrndup(p->tok, (size_t)(p->cur - p->tok));
			return IDENT;
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
