; Go references for the graph layer (appended to go.scm). go.scm already
; emits import specs as reference.import. Here: qualified uses (pkg.Name) and
; environment reads (reference.config).

(selector_expression field: (field_identifier) @name) @reference.attribute
(qualified_type name: (type_identifier) @name) @reference.type

(call_expression
  function: (selector_expression
    operand: (identifier) @_os
    field: (field_identifier) @_fn)
  arguments: (argument_list . (interpreted_string_literal
    (interpreted_string_literal_content) @name))
  (#eq? @_os "os")
  (#match? @_fn "^(Getenv|LookupEnv)$")) @reference.config
