; Java symbols for indexd. Captures are documented in indexd/parse/code.py.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum

; Methods and constructors (methods because they sit inside a type).
(method_declaration name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function
(compact_constructor_declaration name: (identifier) @name) @definition.function
(annotation_type_element_declaration name: (identifier) @name) @definition.function

; final UPPER_CASE fields are constants.
(field_declaration
  (modifiers "final")
  declarator: (variable_declarator
    name: (identifier) @name
    (#match? @name "^[A-Z][A-Z0-9_]*$"))) @definition.constant
(constant_declaration
  declarator: (variable_declarator name: (identifier) @name)) @definition.constant

; References.
(method_invocation name: (identifier) @name) @reference.call
(object_creation_expression type: (type_identifier) @name) @reference.call
(object_creation_expression
  type: (generic_type (type_identifier) @name)) @reference.call
(import_declaration (scoped_identifier) @name) @reference.import
(import_declaration (identifier) @name) @reference.import
