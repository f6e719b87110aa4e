; Ruby symbols for indexd. Captures are documented in indexd/parse/code.py.

(class
  name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.class
(module
  name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.module

; `def x` and `def self.x` (methods when inside a class or module).
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function

; Constant assignments: `MAX = 3`.
(assignment left: (constant) @name) @definition.constant

; References.
(call
  method: (identifier) @_req
  arguments: (argument_list . (string (string_content) @name))
  (#match? @_req "^(require|require_relative|load)$")) @reference.import
(call method: (identifier) @name) @reference.call
