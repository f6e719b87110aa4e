; JavaScript references for the graph layer (appended to javascript.scm).
; javascript.scm already emits import/export-from/require module strings as
; reference.import @name. Here: the names an import brings in (@module = the
; module string), dynamic import(), and process.env reads (reference.config).

(import_statement
  (import_clause (named_imports (import_specifier name: (identifier) @name)))
  source: (string (string_fragment) @module)) @reference.import
(import_statement
  (import_clause (identifier) @name)
  source: (string (string_fragment) @module)) @reference.import_default
(export_statement
  (export_clause (export_specifier name: (identifier) @name))
  source: (string (string_fragment) @module)) @reference.import

(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @name))) @reference.import

(member_expression
  object: (member_expression
    object: (identifier) @_p
    property: (property_identifier) @_e)
  property: (property_identifier) @name
  (#eq? @_p "process")
  (#eq? @_e "env")) @reference.config
(subscript_expression
  object: (member_expression
    object: (identifier) @_p
    property: (property_identifier) @_e)
  index: (string (string_fragment) @name)
  (#eq? @_p "process")
  (#eq? @_e "env")) @reference.config
