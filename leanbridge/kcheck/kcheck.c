/* kcheck: the kernel route. Loads the project's prelude-mode core library into a Lean 4.35.0
   environment through libleanshared's C interface and hands one theorem per input line
   straight to the Lean kernel (no parser, no elaborator), printing one verdict per line.

   Usage: kcheck OLEAN_DIR MODULE STATEMENTS_FILE

   Start-up: import MODULE from OLEAN_DIR, then audit every constant a statement may name
   (ALLOWED below) the way `#print axioms` does: walk the types, values and constructors
   reachable from them; one axiom or one missing constant and kcheck refuses to start (exit 3,
   one line on stderr). Otherwise it prints   ready GITHASH CONSTANTS   where GITHASH is the
   library's Lean commit and CONSTANTS the size of the audited closure.

   Each line of STATEMENTS_FILE is   NAME TYPE VALUE   in a strict prefix syntax:
     term := '(' 'pi' BINDER term term ')'     a forall (default binder)
           | '(' 'fun' BINDER term term ')'    a lambda
           | '(' term term+ ')'                an application
           | '#' DIGITS                        a bound variable, de Bruijn index below the depth
           | CONSTANT                          one of ALLOWED's tokens, universes included
   NAME and BINDER are letters, digits and '_', starting with a letter. Nothing else parses.
   Each line is checked against the imported environment alone (nothing accumulates), and
   answered on one line:
     NAME ok TYPE                 the kernel added the theorem; TYPE is Lean's rendering of the
                                  type of the constant it added, read back from its environment
     NAME rejected KIND[: TEXT]   the kernel's exception (Lean.Kernel.Exception's constructor)
     NAME parse_error column N    the line is outside the syntax (or names another constant)

   KCHECK_ABORT_AT=NAME makes kcheck abort on reaching statement NAME: the fault tests' way to
   crash the real binary mid-file. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lean_abi.h"

enum { EXIT_USAGE = 2, EXIT_REFUSED = 3 };

static void refuse(const char *what, const char *detail) {
    fprintf(stderr, "kcheck: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(EXIT_REFUSED);
}

/* ---- names ---------------------------------------------------------------------------- */

/* The hierarchical Name of a dotted string ("N.add_comm"). */
static lean_obj *mk_name(const char *text) {
    lean_obj *name = lo_box(0); /* Name.anonymous */
    char part[64];
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof part) refuse("name too long", text);
        memcpy(part, p, n);
        part[n] = 0;
        name = lean_name_mk_string(name, lean_mk_string(part));
        p += n + (p[n] == '.');
    }
    return name;
}

/* ---- the constants a statement may name ------------------------------------------------- */

/* Token as written in a statement, the constant, and how many universe arguments it takes
   (each the level 1: every statement is about N : Type). */
static const struct { const char *token, *name; int universes; } ALLOWED[] = {
    {"N", "N", 0}, {"N.add", "N.add", 0}, {"N.mul", "N.mul", 0},
    {"Eq.{1}", "Eq", 1}, {"rfl.{1}", "rfl", 1}, {"Eq.symm.{1}", "Eq.symm", 1}, {"Eq.trans.{1}", "Eq.trans", 1},
    {"congrArg.{1,1}", "congrArg", 2},
    {"N.add_comm", "N.add_comm", 0}, {"N.mul_comm", "N.mul_comm", 0}, {"N.add_assoc", "N.add_assoc", 0},
    {"N.mul_assoc", "N.mul_assoc", 0}, {"N.left_distrib", "N.left_distrib", 0},
    {"N.right_distrib", "N.right_distrib", 0},
};
enum { N_ALLOWED = sizeof ALLOWED / sizeof *ALLOWED };
static lean_obj *allowed_expr[N_ALLOWED]; /* the constant expressions, made once, persistent */

static void make_allowed_exprs(void) {
    lean_obj *one = lean_level_mk_succ(lo_box(0)); /* Level.succ Level.zero */
    for (int i = 0; i < N_ALLOWED; i++) {
        lean_obj *levels = lo_box(0); /* List.nil */
        for (int u = 0; u < ALLOWED[i].universes; u++) {
            lean_obj *cons = lo_ctor(1, 2, 0);
            lo_inc(one);
            lo_set(cons, 0, one);
            lo_set(cons, 1, levels);
            levels = cons;
        }
        allowed_expr[i] = lean_expr_mk_const(mk_name(ALLOWED[i].name), levels);
        lean_mark_persistent(allowed_expr[i]);
    }
}

/* ---- the axiom audit ---------------------------------------------------------------------- */

/* ConstantInfo constructors, and the Expr constructors the walk looks into. */
enum { CI_AXIOM = 0, CI_DEFN = 1, CI_THM = 2, CI_OPAQUE = 3, CI_INDUCT = 5 };
enum { E_CONST = 4, E_APP = 5, E_LAM = 6, E_FORALL = 7, E_LET = 8, E_MDATA = 10, E_PROJ = 11 };

static struct {
    lean_obj *kenv;
    lean_obj *seen[4096];
    int n_seen, axioms, missing;
    char first_problem[160];
} audit;

static void audit_const(lean_obj *name);

static void audit_expr(lean_obj *e) {
    for (;;) {
        switch (lo_tag(e)) {
        case E_CONST: audit_const(lo_get(e, 0)); return;
        case E_APP: audit_expr(lo_get(e, 0)); e = lo_get(e, 1); break;
        case E_LAM: case E_FORALL: audit_expr(lo_get(e, 1)); e = lo_get(e, 2); break;
        case E_LET: audit_expr(lo_get(e, 1)); audit_expr(lo_get(e, 2)); e = lo_get(e, 3); break;
        case E_MDATA: e = lo_get(e, 1); break;
        case E_PROJ: e = lo_get(e, 2); break;
        default: return; /* variables, sorts, literals: no constant */
        }
    }
}

static void note_problem(const char *what, lean_obj *name) {
    if (audit.first_problem[0]) return;
    /* the last component is enough to name it in a one-line refusal */
    lean_obj *last = lo_tag(name) == 1 ? lo_get(name, 1) : NULL;
    snprintf(audit.first_problem, sizeof audit.first_problem, "%s %s", what, last ? lo_cstr(last) : "?");
}

/* Visit a constant once: its type, the value of a definition, theorem or opaque, and the
   constructors of an inductive type, which is what `#print axioms` follows. */
static void audit_const(lean_obj *name) {
    for (int i = 0; i < audit.n_seen; i++)
        if (lean_name_eq(audit.seen[i], name)) return;
    if (audit.n_seen == (int)(sizeof audit.seen / sizeof *audit.seen)) refuse("audit: too many constants", NULL);
    audit.seen[audit.n_seen++] = name;
    lo_inc(audit.kenv);
    lo_inc(name);
    lean_obj *found = lean_environment_find(audit.kenv, name); /* Option ConstantInfo, kept alive */
    if (lo_is_scalar(found)) {
        audit.missing++;
        note_problem("missing constant", name);
        return;
    }
    lean_obj *info = lo_get(found, 0);
    lean_obj *val = lo_get(info, 0);     /* AxiomVal, DefinitionVal, ... */
    lean_obj *header = lo_get(val, 0);   /* ConstantVal: name, level params, type */
    unsigned kind = lo_tag(info);
    if (kind == CI_AXIOM) {
        audit.axioms++;
        note_problem("axiom", name);
    }
    audit_expr(lo_get(header, 2));
    if (kind == CI_DEFN || kind == CI_THM || kind == CI_OPAQUE) audit_expr(lo_get(val, 1));
    if (kind == CI_INDUCT) /* InductiveVal: header, params, indices, all, ctors, ... */
        for (lean_obj *l = lo_get(val, 4); !lo_is_scalar(l); l = lo_get(l, 1)) audit_const(lo_get(l, 0));
}

/* ---- start-up ------------------------------------------------------------------------------ */

static const char *io_error_text(lean_obj *result) {
    lean_obj *err = lo_get(result, 0);
    lo_inc(err);
    return lo_cstr(lean_io_error_to_string(err));
}

/* The kernel environment of MODULE imported from OLEAN_DIR. */
static lean_obj *import_core(const char *olean_dir, const char *module) {
    setenv("LEAN_PATH", olean_dir, 1);
    lean_obj *r = lean_init_search_path();
    if (lo_tag(r) != 0) refuse("cannot set the search path", io_error_text(r));
    /* An Import of MODULE: Lean's default Import value (one name field, then flags) with the
       name replaced, so the flags keep whatever defaults this Lean build gives them. */
    lean_obj *dflt = l_Lean_instInhabitedImport_default;
    if (lo_is_scalar(dflt) || dflt->n_fields != 1) refuse("unexpected layout of Lean's Import", NULL);
    lean_obj *import = lo_ctor(0, 1, 8);
    lo_set(import, 0, mk_name(module));
    memcpy(lo_scalars(import), lo_scalars(dflt), 8);
    lo_inc(l_Lean_Options_empty);
    lean_obj *res = l_Lean_importModules(lean_mk_array(lo_box(1), import), l_Lean_Options_empty, 1024,
                                         lean_mk_array(lo_box(0), lo_box(0)), /* leak_env */ 1, /* load_exts */ 0,
                                         /* OLeanLevel.private */ 2, /* no artifacts */ lo_box(1));
    if (lo_tag(res) != 0) refuse("cannot import the core library", io_error_text(res));
    lean_obj *env = lo_get(res, 0);
    lo_inc(env);
    lo_dec(res);
    lean_obj *kenv = lean_elab_environment_to_kernel_env(env);
    return kenv;
}

static void audit_allowed(lean_obj *kenv) {
    audit.kenv = kenv;
    for (int i = 0; i < N_ALLOWED; i++) audit_const(mk_name(ALLOWED[i].name));
    if (audit.axioms || audit.missing)
        refuse("the core library fails the axiom audit, refusing to check anything", audit.first_problem);
}

/* ---- the strict parser ------------------------------------------------------------------- */

static struct {
    const char *at;    /* next character */
    const char *error; /* where the first error was found */
    unsigned depth;    /* binders around the term being read */
} in;

static lean_obj *parse_error(void) {
    if (!in.error) in.error = in.at;
    return NULL;
}

static void skip_spaces(void) { while (*in.at == ' ') in.at++; }

/* The length of the identifier at the cursor: letters, digits, '_', starting with a letter. */
static size_t identifier(void) {
    size_t n = 0;
    if (!isalpha((unsigned char)in.at[0])) return 0;
    while (isalnum((unsigned char)in.at[n]) || in.at[n] == '_') n++;
    return n;
}

/* The token at the cursor: everything up to a space or parenthesis. */
static size_t token(void) { return strcspn(in.at, " ()"); }

static bool is_word(const char *word, size_t n) { return strlen(word) == n && memcmp(in.at, word, n) == 0; }

static lean_obj *parse_term(void);

static lean_obj *parse_binder(bool forall) {
    skip_spaces();
    size_t n = identifier();
    char binder[16];
    if (!n || n >= sizeof binder || token() != n) return parse_error();
    memcpy(binder, in.at, n);
    binder[n] = 0;
    in.at += n;
    lean_obj *type = parse_term();
    if (!type) return NULL;
    in.depth++;
    lean_obj *body = parse_term();
    in.depth--;
    if (!body) { lo_dec(type); return NULL; }
    lean_obj *name = mk_name(binder);
    return forall ? lean_expr_mk_forall(name, type, body, 0) : lean_expr_mk_lambda(name, type, body, 0);
}

static lean_obj *parse_application(void) {
    lean_obj *f = parse_term();
    if (!f) return NULL;
    int args = 0;
    for (skip_spaces(); *in.at != ')'; skip_spaces(), args++) {
        lean_obj *a = *in.at ? parse_term() : parse_error();
        if (!a) { lo_dec(f); return NULL; }
        f = lean_expr_mk_app(f, a);
    }
    if (!args) { lo_dec(f); return parse_error(); }
    return f;
}

static lean_obj *parse_atom(void) {
    size_t n = token();
    if (in.at[0] == '#') {
        unsigned index = 0;
        size_t i = 1;
        for (; i < n && isdigit((unsigned char)in.at[i]) && index < 100000; i++) index = index * 10 + (in.at[i] - '0');
        if (i == 1 || i != n || index >= in.depth) return parse_error(); /* a loose variable is no statement */
        in.at += n;
        return lean_expr_mk_bvar(lo_box(index));
    }
    for (int i = 0; i < N_ALLOWED; i++)
        if (is_word(ALLOWED[i].token, n)) {
            in.at += n;
            return allowed_expr[i]; /* persistent: no reference to take */
        }
    return parse_error();
}

static lean_obj *parse_term(void) {
    skip_spaces();
    if (*in.at != '(') return parse_atom();
    in.at++;
    skip_spaces();
    size_t n = token();
    bool forall = is_word("pi", n), lambda = is_word("fun", n);
    if (forall || lambda) in.at += n;
    lean_obj *t = forall || lambda ? parse_binder(forall) : parse_application();
    if (!t) return NULL;
    skip_spaces();
    if (*in.at != ')') { lo_dec(t); return parse_error(); }
    in.at++;
    return t;
}

/* ---- checking one statement ---------------------------------------------------------------- */

static const char *EXCEPTIONS[] = {"unknownConstant", "alreadyDeclared", "declTypeMismatch", "declHasMVars",
    "declHasFVars", "funExpected", "typeExpected", "letTypeMismatch", "exprTypeMismatch", "appTypeMismatch",
    "invalidProj", "thmTypeIsNotProp", "other", "deterministicTimeout", "excessiveMemory", "deepRecursion",
    "interrupted"};
enum { EX_DECL_TYPE_MISMATCH = 2, EX_OTHER = 12 };

/* The theorem NAME : TYPE := VALUE as a Declaration (owns its arguments). */
static lean_obj *theorem_decl(lean_obj *name, lean_obj *type, lean_obj *value) {
    lean_obj *all = lo_ctor(1, 2, 0); /* [name] */
    lo_inc(name);
    lo_set(all, 0, name);
    lo_set(all, 1, lo_box(0));
    lean_obj *decl = lo_ctor(2, 1, 0); /* Declaration.thmDecl */
    lo_set(decl, 0, lean_mk_theorem_val(name, lo_box(0), type, value, all));
    return decl;
}

/* "ok" and the added constant's type as Lean renders it, read from the new environment. */
static void report_added(const char *label, lean_obj *kenv, lean_obj *name) {
    lo_inc(kenv);
    lo_inc(name);
    lean_obj *found = lean_environment_find(kenv, name);
    if (lo_is_scalar(found) || lo_tag(lo_get(found, 0)) != CI_THM) {
        printf("%s rejected notAdded: the kernel returned an environment without the theorem\n", label);
    } else {
        lean_obj *type = lo_get(lo_get(lo_get(lo_get(found, 0), 0), 0), 2); /* info -> TheoremVal -> header -> type */
        lean_obj *shown = lean_expr_dbg_to_string(type);
        printf("%s ok %s\n", label, lo_cstr(shown));
        lo_dec(shown);
    }
    lo_dec(found);
}

static void report_exception(const char *label, lean_obj *ex) {
    unsigned kind = lo_tag(ex);
    const char *kind_name = kind < sizeof EXCEPTIONS / sizeof *EXCEPTIONS ? EXCEPTIONS[kind] : "unknown";
    if (kind == EX_OTHER) {
        printf("%s rejected %s: %s\n", label, kind_name, lo_cstr(lo_get(ex, 0)));
    } else if (kind == EX_DECL_TYPE_MISMATCH) { /* fields: env, decl, the type the proof has */
        lean_obj *shown = lean_expr_dbg_to_string(lo_get(ex, 2));
        printf("%s rejected %s: the proof has type %s\n", label, kind_name, lo_cstr(shown));
        lo_dec(shown);
    } else {
        printf("%s rejected %s\n", label, kind_name);
    }
}

static void check_line(lean_obj *kenv, char *line, const char *abort_at) {
    in.at = line;
    in.error = NULL;
    in.depth = 0;
    size_t n = identifier();
    char label[32];
    if (!n || n >= sizeof label || token() != n) {
        printf("? parse_error column 0\n");
        return;
    }
    memcpy(label, line, n);
    label[n] = 0;
    if (abort_at && strcmp(label, abort_at) == 0) abort();
    in.at += n;
    lean_obj *type = parse_term();
    lean_obj *value = type ? parse_term() : NULL;
    skip_spaces();
    if (!value || *in.at) {
        if (type) lo_dec(type);
        if (value) lo_dec(value);
        printf("%s parse_error column %ld\n", label, (long)((in.error ? in.error : in.at) - line));
        return;
    }
    lean_obj *name = mk_name(label);
    lo_inc(name); /* one reference for the declaration, one kept here */
    lean_obj *decl = theorem_decl(name, type, value);
    lo_inc(kenv);
    lean_obj *out = lean_add_decl(kenv, 0, 512, decl, lo_box(0)); /* no heartbeat limit, no cancel token */
    if (lo_tag(out) == 1) report_added(label, lo_get(out, 0), name);
    else report_exception(label, lo_get(out, 0));
    lo_dec(out);
    lo_dec(decl);
    lo_dec(name);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s OLEAN_DIR MODULE STATEMENTS_FILE\n", argv[0]);
        return EXIT_USAGE;
    }
    FILE *statements = fopen(argv[3], "r");
    if (!statements) refuse("cannot open the statements file", argv[3]);
    lean_initialize();
    lean_io_mark_end_initialization();
    lean_obj *kenv = import_core(argv[1], argv[2]);
    audit_allowed(kenv);
    make_allowed_exprs();
    printf("ready %s %d\n", lo_cstr(l_Lean_getGithash___boxed(lo_box(0))), audit.n_seen);
    const char *abort_at = getenv("KCHECK_ABORT_AT");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, statements)) > 0) {
        if (line[len - 1] == '\n') line[--len] = 0;
        if (len) check_line(kenv, line, abort_at);
    }
    free(line);
    fclose(statements);
    return fflush(stdout) == 0 ? 0 : 1;
}
