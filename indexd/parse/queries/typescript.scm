; TypeScript symbols for indexd (also used for TSX). Captures are documented
; in indexd/parse/code.py.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function

(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (_) @name) @definition.namespace
(module name: (_) @name) @definition.module

; Methods, abstract methods and interface method signatures; they become
; methods because they sit inside a class or interface.
(method_definition name: (_) @name) @definition.function
(abstract_method_signature name: (_) @name) @definition.function
(method_signature name: (_) @name) @definition.function

; Class fields holding a function: `handle = () => {}`.
(public_field_definition
  name: (property_identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; const/let/var bound to an arrow function or function expression.
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; Top-level UPPER_CASE constants (plain or exported).
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      (#match? @name "^[A-Z][A-Z0-9_]*$"))) @definition.constant)
(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        (#match? @name "^[A-Z][A-Z0-9_]*$"))) @definition.constant))

; References.
(call_expression function: (identifier) @name) @reference.call
; @module: the receiver as written (`this`, `argument`, `path`): what it is decides how
; sure the graph can be of the method (graph/edges.py, _js_member_targets)
(call_expression
  function: (member_expression object: (_) @module property: (property_identifier) @name)) @reference.call
(new_expression constructor: (identifier) @name) @reference.call
(import_statement source: (string (string_fragment) @name)) @reference.import
(export_statement source: (string (string_fragment) @name)) @reference.import
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @name))
  (#eq? @_require "require")) @reference.import

; `export default` of an anonymous function or class: named "default".
(export_statement "default" @name
  value: [(function_expression !name) (generator_function !name) (arrow_function)]) @definition.function
(export_statement "default" @name value: (class !name)) @definition.class
