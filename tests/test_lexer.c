/* Lexer: tokens, values, locations, newline handling and lexical errors. */
#include <math.h>
#include <string.h>

#include "parser.h"
#include "test_util.h"
#include "util.h"

typedef struct {
	int tok[64];
	YYSTYPE val[64];
	YYLTYPE loc[64];
	int n;
	Diag d;
} Lexed;

static void lex(const char *text, Lexed *out)
{
	memset(out, 0, sizeof *out);
	diag_init(&out->d);
	Parser p = {0};
	p.file = "lex.ir";
	p.start = p.cur = p.line_start = text;
	p.lim = text + strlen(text);
	p.line = 1;
	p.d = &out->d;
	do {
		cr_assert(out->n < 64);
		out->tok[out->n] = yylex(&out->val[out->n], &out->loc[out->n], &p);
	} while (out->tok[out->n++] != END);
}

static void done(Lexed *l)
{
	for (int i = 0; i < l->n; i++)
		if (l->tok[i] == IDENT || l->tok[i] == STRING)
			free(l->val[i].s);
	diag_free(&l->d);
}

Test(lexer, keywords_names_punctuation)
{
	Lexed l;
	lex("graph g { input x : f32[2, 3]\n}", &l);
	int want[] = {GRAPH, IDENT, '{', INPUT, IDENT, ':', IDENT, '[', INT, ',', INT, ']', NL, '}', END};
	cr_assert_eq(l.n, (int)(sizeof want / sizeof *want));
	for (int i = 0; i < l.n; i++)
		cr_assert_eq(l.tok[i], want[i], "token %d: %d, expected %d", i, l.tok[i], want[i]);
	cr_assert_str_eq(l.val[1].s, "g");
	cr_assert_str_eq(l.val[6].s, "f32");
	cr_assert_eq(l.val[8].i, 2);
	cr_assert_eq(l.d.nerrors, 0);
	done(&l);
}

Test(lexer, locations_are_line_and_column)
{
	Lexed l;
	lex("graph g {\n  y = relu(x)\n}", &l);
	/* y is token 4 (after GRAPH IDENT { NL) */
	cr_assert_eq(l.tok[4], IDENT);
	cr_assert_eq(l.loc[4].first_line, 2);
	cr_assert_eq(l.loc[4].first_column, 3);
	cr_assert_eq(l.tok[6], IDENT); /* relu */
	cr_assert_eq(l.loc[6].first_column, 7);
	done(&l);
}

Test(lexer, numbers)
{
	Lexed l;
	lex("0 -7 1.5 -2.5e-3 .25 3e2 inf -inf nan 9223372036854775807", &l);
	cr_assert_eq(l.tok[0], INT);
	cr_assert_eq(l.val[0].i, 0);
	cr_assert_eq(l.val[1].i, -7);
	cr_assert_eq(l.tok[2], FLOAT);
	cr_assert_float_eq(l.val[2].f, 1.5, 0);
	cr_assert_float_eq(l.val[3].f, -2.5e-3, 1e-18);
	cr_assert_float_eq(l.val[4].f, 0.25, 0);
	cr_assert_eq(l.tok[5], FLOAT);
	cr_assert_float_eq(l.val[5].f, 300.0, 0);
	cr_assert(isinf(l.val[6].f) && l.val[6].f > 0);
	cr_assert(isinf(l.val[7].f) && l.val[7].f < 0);
	cr_assert(isnan(l.val[8].f));
	cr_assert_eq(l.tok[9], INT);
	cr_assert_eq(l.val[9].i, INT64_MAX);
	cr_assert_eq(l.d.nerrors, 0);
	done(&l);
}

Test(lexer, newlines_inside_brackets_are_not_tokens)
{
	Lexed l;
	lex("a = f(x,\n  y)\n", &l);
	int want[] = {IDENT, '=', IDENT, '(', IDENT, ',', IDENT, ')', NL, END};
	cr_assert_eq(l.n, 10);
	for (int i = 0; i < l.n; i++)
		cr_assert_eq(l.tok[i], want[i], "token %d", i);
	cr_assert_eq(l.loc[6].first_line, 2);
	done(&l);
}

Test(lexer, comments_and_strings)
{
	Lexed l;
	lex("# a comment\nnpy(\"w \\\"1\\\".npy\") # trailing\n", &l);
	int want[] = {NL, IDENT, '(', STRING, ')', NL, END};
	cr_assert_eq(l.n, 7);
	for (int i = 0; i < l.n; i++)
		cr_assert_eq(l.tok[i], want[i], "token %d", i);
	cr_assert_str_eq(l.val[3].s, "w \"1\".npy");
	done(&l);
}

Test(lexer, dotted_names)
{
	Lexed l;
	lex("layer1.0.conv1.weight", &l);
	cr_assert_eq(l.tok[0], IDENT);
	cr_assert_str_eq(l.val[0].s, "layer1.0.conv1.weight");
	done(&l);
}

Test(lexer, error_unexpected_character)
{
	Lexed l;
	lex("a = $b", &l);
	cr_assert_eq(l.d.nerrors, 1);
	cr_assert_str_eq(l.d.entries[0].msg, "unexpected character '$'");
	cr_assert_eq(l.d.entries[0].loc.line, 1);
	cr_assert_eq(l.d.entries[0].loc.col, 5);
	/* It goes on: b is still a name. */
	cr_assert_eq(l.tok[2], IDENT);
	done(&l);
}

Test(lexer, error_unterminated_string)
{
	Lexed l;
	lex("x = npy(\"abc\n", &l);
	cr_assert_eq(l.d.nerrors, 1);
	cr_assert_str_eq(l.d.entries[0].msg, "unterminated string");
	cr_assert_eq(l.d.entries[0].loc.col, 9);
	done(&l);
}

Test(lexer, error_malformed_number)
{
	Lexed l;
	lex("  12ab", &l);
	cr_assert_eq(l.d.nerrors, 1);
	cr_assert_str_eq(l.d.entries[0].msg, "malformed number '12ab'");
	cr_assert_eq(l.d.entries[0].loc.col, 3);
	done(&l);
}

Test(lexer, error_integer_overflow)
{
	Lexed l;
	lex("99999999999999999999", &l);
	cr_assert_eq(l.d.nerrors, 1);
	cr_assert(strstr(l.d.entries[0].msg, "does not fit in 64 bits"));
	done(&l);
}

/* regression (tests/bad-inputs/float-overflow.ir): 1e999999 was taken as
 * inf; an underflow is the nearest double, as in C */
Test(lexer, error_float_overflow)
{
	Lexed l;
	lex("1e999999", &l);
	cr_assert_eq(l.d.nerrors, 1);
	cr_assert(strstr(l.d.entries[0].msg, "number '1e999999' does not fit in a 64-bit float"));
	done(&l);
	lex("-1e999999 1e-999999", &l);
	cr_assert_eq(l.d.nerrors, 1);
	done(&l);
}

Test(lexer, error_nonprinting_byte)
{
	Lexed l;
	lex("a \x01 b", &l);
	cr_assert_eq(l.d.nerrors, 1);
	cr_assert_str_eq(l.d.entries[0].msg, "unexpected byte 0x01");
	cr_assert_eq(l.d.entries[0].loc.col, 3);
	done(&l);
}
