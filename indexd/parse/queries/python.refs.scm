; Python references for the graph layer (appended to python.scm).
; python.scm already emits `import a.b` and the module of `from m import ...`
; as reference.import with the module as @name. Here:
;   reference.import_from  the module of a `from` statement (same node and line
;                          as python.scm's module reference, so the graph can
;                          tell `from m import x` apart from `import m`)
;   reference.import       each name a `from` statement imports, @module = m
;   reference.attribute    `obj.name` uses (not `self.x`), @module = obj (the receiver)
;   reference.type         base classes and annotations
;   reference.config       env vars and string keys of settings-like objects

(import_from_statement module_name: (_) @name) @reference.import_from
(import_from_statement
  module_name: (_) @module
  name: (dotted_name) @name) @reference.import
(import_from_statement
  module_name: (_) @module
  name: (aliased_import name: (dotted_name) @name)) @reference.import
(import_from_statement
  module_name: (_) @module
  (wildcard_import) @name) @reference.import
; the name an aliased import binds: @name = the alias, @module = the name imported
(import_from_statement
  name: (aliased_import name: (dotted_name) @module alias: (identifier) @name)) @reference.import_alias
(import_statement
  name: (aliased_import name: (dotted_name) @module alias: (identifier) @name)) @reference.import_alias
(future_import_statement
  "__future__" @module
  name: (dotted_name) @name) @reference.import

(attribute
  object: (identifier) @module
  attribute: (identifier) @name
  (#not-eq? @module "self")
  (#not-eq? @module "cls")) @reference.attribute
; `serialize(obj, accessor=self.get_attribute)`, `map(self.f, xs)`: a bound method passed
; as a value runs where it is called (every other read of self.x is no reference: measured
; and not kept, docs/benchmarks.md "Where indexd falls short")
(argument_list
  (attribute object: (identifier) @module attribute: (identifier) @name)
  (#match? @module "^(self|cls)$")) @reference.attribute
(keyword_argument
  value: (attribute object: (identifier) @module attribute: (identifier) @name)
  (#match? @module "^(self|cls)$")) @reference.attribute
; `assertRaises(E, idna.compat.nameprep, "a")`: a function passed by its package path (a
; one-part `compat.nameprep` is an attribute reference already, above)
(argument_list
  (attribute object: (attribute) @module attribute: (identifier) @name)
  (#not-match? @module "^(self|cls)[.]")) @reference.attribute
;   and as a parameter's default (cachetools' `def test_hashkey(self, key=cachetools.keys.hashkey)`)
(default_parameter
  value: (attribute object: (attribute) @module attribute: (identifier) @name)
  (#not-match? @module "^(self|cls)[.]")) @reference.attribute
(typed_default_parameter
  value: (attribute object: (attribute) @module attribute: (identifier) @name)
  (#not-match? @module "^(self|cls)[.]")) @reference.attribute

(class_definition
  superclasses: (argument_list [
    (identifier) @name
    (attribute attribute: (identifier) @name)
  ])) @reference.type
; a subscripted base (`Base[T]`, `mod.Base[int]`, `t.Generic[T]`) is the class before
; the `[...]`: graph/edges.py's MRO lookups follow it like a plain base
(class_definition
  superclasses: (argument_list [
    (subscript value: (identifier) @name)
    (subscript value: (attribute attribute: (identifier) @name))
  ])) @reference.type
(type (identifier) @name) @reference.type
; `class C(Base, metaclass=M)`: @name = C, @module = M as written (the class statement
; runs M's __new__ and __init__: graph/dunder.py)
(class_definition
  name: (identifier) @name
  superclasses: (argument_list (keyword_argument
    name: (identifier) @_kw
    value: [(identifier) (attribute)] @module))
  (#eq? @_kw "metaclass")) @reference.metaclass

; os.environ["X"], environ["X"]
(subscript
  value: [
    (attribute attribute: (identifier) @_env)
    (identifier) @_env
  ]
  subscript: (string (string_content) @name)
  (#eq? @_env "environ")) @reference.config
; os.getenv("X"), getenv("X"), os.environ.get("X"), environ.get("X")
(call
  function: [
    (identifier) @_fn
    (attribute attribute: (identifier) @_fn)
  ]
  arguments: (argument_list . (string (string_content) @name))
  (#eq? @_fn "getenv")) @reference.config
(call
  function: (attribute
    object: [
      (identifier) @_env
      (attribute attribute: (identifier) @_env)
    ]
    attribute: (identifier) @_get)
  arguments: (argument_list . (string (string_content) @name))
  (#eq? @_env "environ")
  (#eq? @_get "get")) @reference.config
; settings["key"], config["key"], self.settings["key"], cfg.get("key")
(subscript
  value: [
    (identifier) @_cfg
    (attribute attribute: (identifier) @_cfg)
  ]
  subscript: (string (string_content) @name)
  (#match? @_cfg "^(settings|SETTINGS|config|CONFIG|conf|cfg|options|env|ENV)$")) @reference.config
(call
  function: (attribute
    object: [
      (identifier) @_cfg
      (attribute attribute: (identifier) @_cfg)
    ]
    attribute: (identifier) @_get)
  arguments: (argument_list . (string (string_content) @name))
  (#match? @_cfg "^(settings|SETTINGS|config|CONFIG|conf|cfg|options|env|ENV)$")
  (#eq? @_get "get")) @reference.config

; Decorators are calls that run where they are written (at import time for a
; module-level or class-body definition): `@dataclass` is `dataclass(cls)`.
; (`@app.route(...)` is a call already; the graph never name-matches a decorator: an
; unresolved one is mostly a builtin, `@property`, `@x.setter`.)
(decorator (identifier) @name) @reference.decorator
(decorator (attribute object: (_) @module attribute: (identifier) @name)) @reference.decorator

; `h = f(g)` / `h = f(key=g)`: @name = h, @module = g (at module level, a call `h()`
; may run g: graph/passed.py)
(assignment left: (identifier) @name
  right: (call arguments: (argument_list (identifier) @module))) @reference.bind_passes
(assignment left: (identifier) @name
  right: (call arguments: (argument_list (keyword_argument value: (identifier) @module)))) @reference.bind_passes

; `Cache = LRUCache` / `Cache = pkg.Cache` in a class body: @name = the attribute, @module
; = the value as written. What `self.Cache(...)` builds, in that class and in a test mixin
; whose subclasses bind it (graph/class_values.py; cachetools' CacheTestMixin).
(class_definition
  body: (block (expression_statement
    (assignment left: (identifier) @name right: [(identifier) (attribute)] @module)))) @reference.class_value

; What a name (or self.attr; cls.attr in a classmethod, a class attribute that instances
; read as self.attr) is bound to, for instance types (graph/types.py):
;   reference.bind_call  `x = C(...)` / `x = f(...)`, @module = the callee as written
;   reference.bind_type  `x: T = ...`, `def f(x: T)`, @module = the annotation
;   reference.bind_item  `x = d[k]`, @module = the container (`d: Dict[str, C]` gives C)
;   reference.bind_none  `x = None` (no type either way)
;   reference.bind       any other binding: assignments, parameters, for, with (unknown)
;   reference.bind_name  `self.x = y`, @module = y (self.x holds what y holds there)
;   reference.bind_param a plain parameter (a pytest fixture's value when it names one:
;                        graph/fixtures.py; else unknown, as `bind`)
;   reference.returns    `def f() -> T`, @name = the function, @module = T
;   reference.return_value  `return expr`, @module = expr (a type without `-> T`)
;   reference.yields     a `yield` (the function is a generator), @module = the whole
;                        `yield ...` (a fixture's value is what it yields)
(assignment left: (identifier) @name right: (call function: (_) @module)) @reference.bind_call
(assignment left: (identifier) @name type: (type) @module) @reference.bind_type
(assignment left: (identifier) @name right: (none)) @reference.bind_none
(assignment left: (identifier) @name right: (subscript value: (_) @module)) @reference.bind_item
(assignment left: (identifier) @name) @reference.bind
;   `Decimal = decimal.Decimal`, @module = the alias's value: the global, under its own name
(assignment left: (identifier) @name right: (attribute attribute: (identifier) @_attr) @module
  (#eq? @name @_attr)) @reference.bind
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier)) @name
  right: (call function: (_) @module)
  (#match? @_self "^(self|cls)$")) @reference.bind_call
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier)) @name
  type: (type) @module
  (#match? @_self "^(self|cls)$")) @reference.bind_type
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier)) @name
  right: (none)
  (#match? @_self "^(self|cls)$")) @reference.bind_none
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier)) @name
  right: (identifier) @module
  (#match? @_self "^(self|cls)$")) @reference.bind_name
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier)) @name
  (#match? @_self "^(self|cls)$")) @reference.bind
(assignment left: (pattern_list (identifier) @name)) @reference.bind
(typed_parameter (identifier) @name type: (type) @module) @reference.bind_type
(typed_default_parameter name: (identifier) @name type: (type) @module) @reference.bind_type
(parameters (identifier) @name) @reference.bind_param
;   a default's value as @module: `cmp=cmp` keeps the module's cmp (graph/types.py)
(default_parameter name: (identifier) @name value: (_) @module) @reference.bind
;   a default a call builds, `order=_FieldsOrder()`: what the parameter holds unless a
;   caller passes another (pyflakes' `iter_child_nodes` reads `_fields_order[...]`)
(default_parameter name: (identifier) @name value: (call function: (_) @module)) @reference.bind_call
(for_statement left: (identifier) @name) @reference.bind
(for_statement left: (pattern_list (identifier) @name)) @reference.bind
;   reference.bind_for   `for x in r`, @module = r: x holds an element of what r's annotation
;                        (or its callee's `-> List[X]`) says it holds
(for_statement left: (identifier) @name
  right: [(identifier) (attribute) (call)] @module) @reference.bind_for
(as_pattern alias: (as_pattern_target (identifier) @name)) @reference.bind
;   reference.bind_with   `with r as x`, @module = r: x holds what r's __enter__ returns
;   reference.bind_awith  the same `async with` (__aenter__), stands for its bind_with
;   reference.bind_cast   `x = t.cast(T, v)`, @module = the whole call: T when it names a
;                         class, else what v holds (stands for the bind_call of the line)
(with_item value: (as_pattern . [(identifier) (attribute) (call)] @module
  alias: (as_pattern_target (identifier) @name))) @reference.bind_with
(with_statement "async" (with_clause (with_item value: (as_pattern
  . [(identifier) (attribute) (call)] @module
  alias: (as_pattern_target (identifier) @name))))) @reference.bind_awith
(assignment left: (identifier) @name
  right: (call function: [(identifier) (attribute)] @_cast) @module
  (#match? @_cast "^([A-Za-z_]+[.])?cast$")) @reference.bind_cast
(function_definition name: (identifier) @name return_type: (type) @module) @reference.returns
(return_statement "return" @name (_) @module) @reference.return_value
(yield "yield" @name) @module @reference.yields
;   reference.return_call  `return X(...)` / `yield X(...)`, @module = the callee X as written:
;                          what a value too long to keep whole (`return Environment(loader=...)`
;                          over 200 characters) builds
(return_statement "return" @name (call function: [(identifier) (attribute)] @module)) @reference.return_call
(yield "yield" @name (call function: [(identifier) (attribute)] @module)) @reference.return_call
; `if __name__ == "__main__":` at module level: what follows runs as a script, not on import
(module
  (if_statement
    condition: (comparison_operator (identifier) @name (#eq? @name "__name__"))) @reference.main_guard)
; Implicit dunder calls on a receiver (graph/dunder.py), @module = the receiver as written:
;   reference.iterates  `for x in r` (r.__iter__), @name = "for"
;   reference.enters    `with r:` / `with r as x` (r.__enter__, r.__exit__), @name = "with"
;   reference.builtin_of  `repr(r)` / `str(r)` / `len(r)` / `iter(r)` / `next(r)`,
;                         @name = the builtin
(for_statement "for" @name right: [(identifier) (attribute) (call)] @module) @reference.iterates
(with_statement "with" @name
  (with_clause (with_item value: [(identifier) (attribute) (call)] @module))) @reference.enters
(with_statement "with" @name
  (with_clause (with_item value: (as_pattern . [(identifier) (attribute) (call)] @module)))) @reference.enters
;   `async with r` / `async for x in r`: also a reference with @name = "async" on the
;   same line and receiver, which stands for the one named "with" / "for"
;   (r.__aenter__/__aexit__, r.__aiter__/__anext__)
(for_statement "async" @name right: [(identifier) (attribute) (call)] @module) @reference.iterates
(with_statement "async" @name
  (with_clause (with_item value: [(identifier) (attribute) (call)] @module))) @reference.enters
(with_statement "async" @name
  (with_clause (with_item value: (as_pattern . [(identifier) (attribute) (call)] @module)))) @reference.enters
(call function: (identifier) @name
  arguments: (argument_list . [(identifier) (attribute)] @module .)
  (#match? @name "^(repr|str|len)$")) @reference.builtin_of
;   reference.truth  a value's truth tested (r.__bool__, else r.__len__), @name = the
;                    keyword: `if r:` / `elif r:` / `while r:` / `not r` / `r and ...` /
;                    `r or ...` (the left operand; the right one too in a condition)
(if_statement "if" @name condition: [(identifier) (attribute)] @module) @reference.truth
(elif_clause "elif" @name condition: [(identifier) (attribute)] @module) @reference.truth
(while_statement "while" @name condition: [(identifier) (attribute)] @module) @reference.truth
(not_operator "not" @name argument: [(identifier) (attribute)] @module) @reference.truth
(boolean_operator left: [(identifier) (attribute)] @module operator: _ @name) @reference.truth
(if_statement condition: (boolean_operator operator: _ @name
  right: [(identifier) (attribute)] @module)) @reference.truth
;   `iter(r)` (r.__iter__; not `iter(f, sentinel)`, which calls f), `next(r)` /
;   `next(r, default)` (r.__next__)
(call function: (identifier) @name
  arguments: (argument_list . [(identifier) (attribute) (call)] @module .)
  (#eq? @name "iter")) @reference.builtin_of
(call function: (identifier) @name
  arguments: (argument_list . [(identifier) (attribute) (call)] @module)
  (#eq? @name "next")) @reference.builtin_of
;   a comprehension's first `for ... in r` (r is evaluated outside it; the later
;   clauses iterate the comprehension's own names): as the for statement
;   (the four comprehension types are named, not `(_ body: ...)`: a wildcard root
;   starts a match at every node of the tree; the two cost 0.21 of the whole query's
;   0.75 CPU s on 299 stdlib files, bench/query_cost.py)
[
  (list_comprehension body: (_) . (for_in_clause "for" @name
    right: [(identifier) (attribute) (call)] @module))
  (set_comprehension body: (_) . (for_in_clause "for" @name
    right: [(identifier) (attribute) (call)] @module))
  (dictionary_comprehension body: (_) . (for_in_clause "for" @name
    right: [(identifier) (attribute) (call)] @module))
  (generator_expression body: (_) . (for_in_clause "for" @name
    right: [(identifier) (attribute) (call)] @module))
] @reference.iterates
[
  (list_comprehension body: (_) . (for_in_clause "async" @name
    right: [(identifier) (attribute) (call)] @module))
  (set_comprehension body: (_) . (for_in_clause "async" @name
    right: [(identifier) (attribute) (call)] @module))
  (dictionary_comprehension body: (_) . (for_in_clause "async" @name
    right: [(identifier) (attribute) (call)] @module))
  (generator_expression body: (_) . (for_in_clause "async" @name
    right: [(identifier) (attribute) (call)] @module))
] @reference.iterates
;   reference.subscript        `r[k]` read (r.__getitem__), @name = "[", @module = r
;   reference.subscript_store  `r[k] = v` (r.__setitem__; the read above matches the same
;                              node, and graph/dunder.py drops it)
;   reference.subscript_update `r[k] += v` (both)
;   reference.subscript_del    `del r[k]` (r.__delitem__)
;   reference.contains         `k in r` / `k not in r` (r.__contains__), @name = the operator
(subscript value: [(identifier) (attribute)] @module "[" @name) @reference.subscript
(assignment left: (subscript value: [(identifier) (attribute)] @module "[" @name))
  @reference.subscript_store
(augmented_assignment left: (subscript value: [(identifier) (attribute)] @module "[" @name))
  @reference.subscript_update
(delete_statement (subscript value: [(identifier) (attribute)] @module "[" @name))
  @reference.subscript_del
(delete_statement (expression_list (subscript value: [(identifier) (attribute)] @module "[" @name)))
  @reference.subscript_del
(comparison_operator (_) ["in" "not in"] @name [(identifier) (attribute)] @module)
  @reference.contains
;   reference.global_decl  `global X` in a function: it rebinds the module's own X, a
;                          store that outlives the call (graph.writes_module_state)
(global_statement (identifier) @name) @reference.global_decl
;   reference.attr_store  `r.name = v`, @module = r: runs __setattr__, not __getattr__
(assignment left: (attribute object: [(identifier) (attribute)] @module
  attribute: (identifier) @name)) @reference.attr_store
; Dispatch by a name built at run time (graph/dispatch.py): `getattr(r, f"visit_{...}")`,
; `getattr(r, "do_" + x)`, `getattr(r, "_h_%s" % x)`: @name = the string's fixed start,
; @module = r. `getattr(r, v)`: reference.dispatch_var, @name = v; a `v = "visit_" + x`
; (or f"visit_{x}", "visit_%s" % x, "visit_{}".format(x)) in the same function is
; reference.dispatch_prefix, @name = v, @module = the fixed start; `getattr(r, v.lower())`
; (sqlparse's filters) reads v too.
(call function: (identifier) @_getattr
  arguments: (argument_list . (_) @module
    . (string (string_start) . (string_content) @name . (interpolation)))
  (#eq? @_getattr "getattr")
  (#match? @name "^[A-Za-z_][A-Za-z0-9_]")) @reference.dispatch
(call function: (identifier) @_getattr
  arguments: (argument_list . (_) @module
    . (binary_operator left: (string (string_start) . (string_content) @name . (string_end))
        operator: ["+" "%"]))
  (#eq? @_getattr "getattr")
  (#match? @name "^[A-Za-z_][A-Za-z0-9_]")) @reference.dispatch
(call function: (identifier) @_getattr
  arguments: (argument_list . (_) @module
    . (call function: (attribute
        object: (string (string_start) . (string_content) @name . (string_end))
        attribute: (identifier) @_format)))
  (#eq? @_getattr "getattr")
  (#eq? @_format "format")
  (#match? @name "^[A-Za-z_][A-Za-z0-9_]")) @reference.dispatch
(call function: (identifier) @_getattr
  arguments: (argument_list . (_) @module . (identifier) @name)
  (#eq? @_getattr "getattr")) @reference.dispatch_var
(call function: (identifier) @_getattr
  arguments: (argument_list . (_) @module
    . (call function: (attribute object: (identifier) @name attribute: (identifier) @_case)))
  (#eq? @_getattr "getattr")
  (#match? @_case "^(lower|upper|strip)$")) @reference.dispatch_var
(assignment left: (identifier) @name
  right: [
    (binary_operator left: (string (string_start) . (string_content) @module . (string_end))
      operator: ["+" "%"])
    (string (string_start) . (string_content) @module . (interpolation))
    (call function: (attribute
      object: (string (string_start) . (string_content) @module . (string_end))
      attribute: (identifier) @_format)
      (#eq? @_format "format"))
  ]
  (#match? @module "^[A-Za-z_][A-Za-z0-9_]")) @reference.dispatch_prefix
;   reference.dispatch_case  `v = x.upper()`: a name built in capitals, which `getattr(r, v)`
;                            in the same function looks up (pyflakes' `Checker.DICT`, ...):
;                            @name = v, @module = upper
(assignment left: (identifier) @name
  right: (call function: (attribute attribute: (identifier) @module))
  (#eq? @module "upper")) @reference.dispatch_case
;   reference.typevar_bound  `T = TypeVar("T", bound=X)`: @name = T, @module = X as written (an
;                            annotation `-> T` then names an X: graph/types.py)
(assignment left: (identifier) @name
  right: (call function: [(identifier) (attribute)] @_typevar
    arguments: (argument_list (keyword_argument name: (identifier) @_bound value: (_) @module)))
  (#match? @_typevar "(^|[.])TypeVar$")
  (#eq? @_bound "bound")) @reference.typevar_bound
;   reference.stored  a name stored in a dict, list or tuple literal: a registry (`FILTERS =
;                     {"abs": do_abs}`), or functions run in turn (sqlparse's `for func in
;                     [group_brackets, ...]: func(stmt)`); a reference from where the literal
;                     is, for resolved names only, never a name match
(list (identifier) @name) @reference.stored
(tuple (identifier) @name) @reference.stored
(pair value: (identifier) @name) @reference.stored
;   also `obj.name` there, @module = obj (sqlparse's lexer stores `(regex, self.is_keyword)`)
(list (attribute object: (identifier) @module attribute: (identifier) @name)) @reference.stored
(tuple (attribute object: (identifier) @module attribute: (identifier) @name)) @reference.stored
(pair value: (attribute object: (identifier) @module attribute: (identifier) @name)) @reference.stored
;   reference.passed  a name passed as an argument (`getter_func=getter`, `map(convert, xs)`):
;                     kept only where the file defines a function or class of that name
;                     (parse/code.py), resolved only, never a name match (marshmallow's
;                     `_call_and_store(getter_func=getter)` runs its nested `getter`)
(argument_list (identifier) @name) @reference.passed
(keyword_argument value: (identifier) @name) @reference.passed
;                     and a tuple without parentheses returned, assigned or looped over:
;                     `return _restore_curry, state` (toolz's curry.__reduce__, whose first
;                     item pickle calls), `for op in lt, le:`; as passed, not stored, for the
;                     same checks (a local or parameter of the name is what it names)
(return_statement (expression_list (identifier) @name)) @reference.passed
;                     and a name returned alone: a decorator factory's `return decorator`, a
;                     decorator's `return wrapper` (cachetools' `cached(cache)` returns the
;                     `decorator` that returns the `wrapper` every decorated call runs)
(return_statement (identifier) @name) @reference.passed
(assignment right: (expression_list (identifier) @name)) @reference.passed
(for_statement right: (expression_list (identifier) @name)) @reference.passed
;   reference.named  a module-level list or tuple of strings that name the file's functions or
;                    classes (jinja2's `exported = ["identity", ...]`, which the template
;                    compiler writes into generated code): run by name, from where no edge
;                    shows; kept only for names the file defines, never for `__all__`
;                    (star imports are resolved: graph/resolve.py)
(module (expression_statement (assignment left: (identifier) @module
  right: [(list (string (string_content) @name)) (tuple (string (string_content) @name))])))
  @reference.named
;   reference.bind_roundtrip  `x = pickle.loads(pickle.dumps(y))`: @module = y (x holds what y
;                             holds; stands for the bind_call of the line)
(assignment left: (identifier) @name
  right: (call
    function: (attribute object: (identifier) @_pickle attribute: (identifier) @_loads)
    arguments: (argument_list . (call
      function: (attribute object: (identifier) @_pickle2 attribute: (identifier) @_dumps)
      arguments: (argument_list . (identifier) @module)) .))
  (#eq? @_pickle "pickle") (#eq? @_pickle2 "pickle")
  (#eq? @_loads "loads") (#eq? @_dumps "dumps")) @reference.bind_roundtrip
; What fills a list (graph/types.py: `for v in c` holds the classes put into c):
;   reference.fills       `c.append(C(...))`, `c.add(...)`, `c.appendleft(...)`,
;                         `c.extend([C(), ...])`, `c = [C(), ...]`: @name = the container as
;                         written (`self.x`, `stack.x`, `xs`), @module = an element's callee
;   reference.fills_name  the same with a name, `c.append(v)`: @module = v
;   reference.bind_list   `xs = [...]`, `self.x = []`: a list literal (the plain `bind` of the
;                         line is the same binding)
(call
  function: (attribute object: [(identifier) (attribute)] @name attribute: (identifier) @_fill)
  arguments: (argument_list . (call function: [(identifier) (attribute)] @module) .)
  (#match? @_fill "^(append|add|appendleft)$")) @reference.fills
(call
  function: (attribute object: [(identifier) (attribute)] @name attribute: (identifier) @_fill)
  arguments: (argument_list . [(list (call function: [(identifier) (attribute)] @module))
                               (tuple (call function: [(identifier) (attribute)] @module))] .)
  (#eq? @_fill "extend")) @reference.fills
(assignment left: [(identifier) (attribute)] @name
  right: (list (call function: [(identifier) (attribute)] @module))) @reference.fills
(call
  function: (attribute object: [(identifier) (attribute)] @name attribute: (identifier) @_fill)
  arguments: (argument_list . (identifier) @module .)
  (#match? @_fill "^(append|add|appendleft)$")) @reference.fills_name
(assignment left: (identifier) @name right: (list)) @reference.bind_list
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier)) @name
  right: (list)
  (#match? @_self "^(self|cls)$")) @reference.bind_list
;   reference.call_result  `C(...)(...)`: what a call returns, called at once; @name = the inner
;                          callee, @module = the inner call as written (graph/dunder.py: an
;                          instance of C runs C.__call__; toolz's `curry(map)(str)`)
(call function: (call function: [(identifier) (attribute)] @name) @module) @reference.call_result
