; Rust references for the graph layer (appended to rust.scm). rust.scm
; already emits `use` arguments and `extern crate` as reference.import. Here:
; `mod x;` declarations (reference.mod), type uses and env reads.

(mod_item name: (identifier) @name !body) @reference.mod

(type_identifier) @name @reference.type

(call_expression
  function: (scoped_identifier
    path: [(identifier) (scoped_identifier)] @_path
    name: (identifier) @_fn)
  arguments: (arguments . (string_literal (string_content) @name))
  (#match? @_path "env$")
  (#match? @_fn "^(var|var_os)$")) @reference.config
(macro_invocation
  macro: (identifier) @_m
  (token_tree . (string_literal (string_content) @name))
  (#match? @_m "^(env|option_env)$")) @reference.config
