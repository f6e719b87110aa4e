; Go symbols for indexd. Captures are documented in indexd/parse/code.py.

(function_declaration name: (identifier) @name) @definition.function

; Methods: the receiver's type becomes the parent (`Server.Start`).
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @definition.method

; Type specs: structs, interfaces, everything else is a type.
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec
  name: (type_identifier) @name
  type: [
    (type_identifier) (qualified_type) (generic_type) (pointer_type)
    (array_type) (slice_type) (map_type) (channel_type) (function_type)
    (negated_type) (parenthesized_type)
  ]) @definition.type
(type_alias name: (type_identifier) @name) @definition.type

; Interface methods sit inside the interface.
(method_elem name: (field_identifier) @name) @definition.function

; Package-level constants.
(source_file
  (const_declaration
    (const_spec name: (identifier) @name) @definition.constant))

; References.
(call_expression function: (identifier) @name) @reference.call
(call_expression
  function: (selector_expression field: (field_identifier) @name)) @reference.call
(import_spec path: (interpreted_string_literal
  (interpreted_string_literal_content) @name)) @reference.import
