; References JavaScript, TypeScript and TSX share (their grammars name these nodes alike),
; appended to each one's own queries (parse/code.py, query_source).

; CommonJS: `const { Option, Help: H } = require('./option.js')` brings in Option and Help,
; as `import { Option } from` does (commander 12 imports this way).
(variable_declarator
  name: (object_pattern (shorthand_property_identifier_pattern) @name)
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require")) @reference.import
(variable_declarator
  name: (object_pattern (pair_pattern key: (property_identifier) @name))
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require")) @reference.import

; `const program = new Command()`, `p = new ns.Command()`: @module = the class as written; the
; variable then holds that class (graph/edges.py, _js_member_targets)
(variable_declarator
  name: (identifier) @name
  value: (new_expression constructor: (_) @module)) @reference.bind_new
(assignment_expression
  left: (identifier) @name
  right: (new_expression constructor: (_) @module)) @reference.bind_new

; CommonJS exports, for what `const m = require('./m'); m(...)` and `m.name(...)` call
; (graph/commonjs.py). Exports are module-level statements only:
;   reference.cjs_bind            `var m = require('./m')`: @name = m, @module = the spec
;   reference.cjs_export          `module.exports = x` / `= function x() {}` (@name = x), an
;                                 anonymous function there (@name = "exports", its definition)
;   reference.cjs_export_require  `module.exports = require('./m')`: @module = the spec
;                                 (@name = "exports": every reference pattern names one)
;   reference.cjs_prop_value      `obj.k = x` (@name = obj.k) and `module.exports = { k: x }` /
;                                 `{ x }` (@name = k): @module = x
;   reference.cjs_prop_require    the same with `require('./m')` for x: @module = the spec
(variable_declarator
  name: (identifier) @name
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require")) @reference.cjs_bind
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_m property: (property_identifier) @_e)
  right: [(identifier) @name
          (function_expression name: (identifier) @name)
          (generator_function name: (identifier) @name)]
  (#eq? @_m "module") (#eq? @_e "exports")) @reference.cjs_export))
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_m property: (property_identifier) @name)
  right: [(arrow_function) (function_expression !name) (generator_function !name)]
  (#eq? @_m "module") (#eq? @name "exports")) @reference.cjs_export))
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_m property: (property_identifier) @name)
  right: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_m "module") (#eq? @name "exports") (#eq? @_require "require"))
  @reference.cjs_export_require))
(program (expression_statement (assignment_expression
  left: (member_expression object: [(identifier) (member_expression)]
                           property: (property_identifier)) @name
  right: (identifier) @module
  (#not-eq? @name "module.exports")) @reference.cjs_prop_value))
(program (expression_statement (assignment_expression
  left: (member_expression object: [(identifier) (member_expression)]
                           property: (property_identifier)) @name
  right: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#not-eq? @name "module.exports") (#eq? @_require "require")) @reference.cjs_prop_require))
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_m property: (property_identifier) @_e)
  right: (object (pair key: (property_identifier) @name value: (identifier) @module))
  (#eq? @_m "module") (#eq? @_e "exports")) @reference.cjs_prop_value))
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_m property: (property_identifier) @_e)
  right: (object (shorthand_property_identifier) @name)
  (#eq? @_m "module") (#eq? @_e "exports")) @reference.cjs_prop_value))
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_m property: (property_identifier) @_e)
  right: (object (pair key: (property_identifier) @name
                       value: (call_expression
                         function: (identifier) @_require
                         arguments: (arguments . (string (string_fragment) @module)))))
  (#eq? @_m "module") (#eq? @_e "exports") (#eq? @_require "require")) @reference.cjs_prop_require))

;   reference.passed  a name used as a value: an argument (`isFile(file, onex)`), the fallback
;                     of `||` / `??` (`opts.isFile || defaultIsFile`), a variable's or a
;                     property's value (`var f = g`, `{ check: g }`); kept only where the file
;                     defines a function or class of that name (parse/code.py): it runs where
;                     it is passed (resolve's defaults and nested callbacks)
(arguments (identifier) @name) @reference.passed
(binary_expression operator: ["||" "??"] right: (identifier) @name) @reference.passed
(variable_declarator value: (identifier) @name) @reference.passed
(pair value: (identifier) @name) @reference.passed


;   reference.esm_default  the name `export default` gives: `export default function f() {}`,
;                          `export default class C {}`, `export default x` (graph/resolve_langs.py:
;                          `import y from './m'` binds y to it, whatever y is called)
(export_statement "default" declaration: (function_declaration name: (identifier) @name))
  @reference.esm_default
(export_statement "default" declaration: (class_declaration name: (_) @name))
  @reference.esm_default
(export_statement "default" value: (identifier) @name) @reference.esm_default

; What a call returns (graph/js_types.py): `var w = walk(obj)` (@name = w, @module = the callee
; as written) and each `return <value>` (@name = "return", @module = the value as written): a
; function whose every return is `new C(...)` gives its callers' values the class C.
(variable_declarator
  name: (identifier) @name
  value: (call_expression function: [(identifier) (member_expression)] @module)) @reference.js_bind_call
(assignment_expression
  left: (identifier) @name
  right: (call_expression function: [(identifier) (member_expression)] @module)) @reference.js_bind_call
(return_statement "return" @name . (_) @module) @reference.js_return

; ES5 method aliases: `Emitter.prototype.on = Emitter.prototype.addListener` (@name = the
; alias's path, @module = the method's): a call of `x.on(...)` runs addListener (js_types.py)
(program (expression_statement (assignment_expression
  left: (member_expression
    object: (member_expression object: (identifier) property: (property_identifier) @_p1)
    property: (property_identifier)) @name
  right: (member_expression
    object: (member_expression object: (identifier) property: (property_identifier) @_p2)
    property: (property_identifier)) @module
  (#eq? @_p1 "prototype") (#eq? @_p2 "prototype")) @reference.js_alias))
; `f.bind(x)`, `f.call(x)`, `f.apply(x, args)`: a use of f (kept where the file defines f)
(call_expression
  function: (member_expression object: (identifier) @name property: (property_identifier) @_m)
  (#match? @_m "^(bind|call|apply)$")) @reference.passed
; a member passed as an argument, `fail(t, path.posix.join)`: @module = the receiver; kept
; only where it resolves (graph/edges.py: a data member is no definition), never name-matched
(arguments (member_expression object: (_) @module property: (property_identifier) @name))
  @reference.attribute
; `table[key]` on a name: when the file's module-level object literal of that name holds
; functions, whichever the key names may run there (graph/js_types.py, keyed_member_edges)
(subscript_expression object: (identifier) @name) @reference.js_keyed
