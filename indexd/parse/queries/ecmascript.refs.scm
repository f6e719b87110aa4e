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
