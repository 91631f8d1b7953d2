"""The part of Perfetto's trace schema (protos/perfetto/trace/, perfetto_trace.proto) that
this reader reads, declared here as a descriptor, so no generated `_pb2` module or
`protoc` is needed; field numbers are Perfetto's. Fields not declared are skipped by the
protobuf decoder, as in any reader of an older schema.

`Trace` is the file; `TracePacket` is one packet of it.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from .rules import (  # noqa: F401 - Perfetto's enum values, here with the schema
    COUNTER,
    INSTANT,
    NESTED_ARRAY,
    NESTED_DICT,
    SEQ_INCREMENTAL_STATE_CLEARED,
    SLICE_BEGIN,
    SLICE_END,
)

_F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_SCALARS = {
    "uint64": _F.TYPE_UINT64,
    "int64": _F.TYPE_INT64,
    "uint32": _F.TYPE_UINT32,
    "int32": _F.TYPE_INT32,
    "fixed64": _F.TYPE_FIXED64,
    "double": _F.TYPE_DOUBLE,
    "bool": _F.TYPE_BOOL,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
}

# message → (field, number, type, repeated); a type that is not a scalar is a message.
_MESSAGES: dict[str, list[tuple[str, int, str, bool]]] = {
    "Trace": [("packet", 1, "TracePacket", True)],
    "TracePacket": [
        ("timestamp", 8, "uint64", False),
        ("timestamp_clock_id", 58, "uint32", False),
        ("trusted_packet_sequence_id", 10, "uint32", False),
        ("track_event", 11, "TrackEvent", False),
        ("track_descriptor", 60, "TrackDescriptor", False),
        ("interned_data", 12, "InternedData", False),
        ("sequence_flags", 13, "uint32", False),
        ("incremental_state_cleared", 41, "bool", False),
        ("trace_packet_defaults", 59, "TracePacketDefaults", False),
        ("chrome_events", 5, "ChromeEventBundle", False),
        ("clock_snapshot", 6, "bytes", False),
        ("compressed_packets", 50, "bytes", False),
        ("previous_packet_dropped", 42, "bool", False),
    ],
    "TracePacketDefaults": [
        ("timestamp_clock_id", 58, "uint32", False),
        ("track_event_defaults", 11, "TrackEventDefaults", False),
    ],
    "TrackEventDefaults": [("track_uuid", 11, "uint64", False)],
    "TrackEvent": [
        ("category_iids", 3, "uint64", True),
        ("categories", 22, "string", True),
        ("name_iid", 10, "uint64", False),
        ("name", 23, "string", False),
        ("type", 9, "int32", False),
        ("track_uuid", 11, "uint64", False),
        ("counter_value", 30, "int64", False),
        ("double_counter_value", 44, "double", False),
        ("flow_ids_old", 36, "uint64", True),
        ("flow_ids", 47, "fixed64", True),
        ("terminating_flow_ids_old", 42, "uint64", True),
        ("terminating_flow_ids", 48, "fixed64", True),
        ("correlation_id", 52, "uint64", False),
        ("debug_annotations", 4, "DebugAnnotation", True),
    ],
    "DebugAnnotation": [
        ("name_iid", 1, "uint64", False),
        ("name", 10, "string", False),
        ("bool_value", 2, "bool", False),
        ("uint_value", 3, "uint64", False),
        ("int_value", 4, "int64", False),
        ("double_value", 5, "double", False),
        ("string_value", 6, "string", False),
        ("string_value_iid", 17, "uint64", False),
        ("pointer_value", 7, "uint64", False),
        ("nested_value", 8, "NestedValue", False),
        ("legacy_json_value", 9, "string", False),
        ("dict_entries", 11, "DebugAnnotation", True),
        ("array_values", 12, "DebugAnnotation", True),
    ],
    "NestedValue": [
        ("nested_type", 1, "int32", False),
        ("dict_keys", 2, "string", True),
        ("dict_values", 3, "NestedValue", True),
        ("array_values", 4, "NestedValue", True),
        ("int_value", 5, "int64", False),
        ("double_value", 6, "double", False),
        ("bool_value", 7, "bool", False),
        ("string_value", 8, "string", False),
    ],
    "TrackDescriptor": [
        ("uuid", 1, "uint64", False),
        ("parent_uuid", 5, "uint64", False),
        ("name", 2, "string", False),
        ("process", 3, "ProcessDescriptor", False),
        ("thread", 4, "ThreadDescriptor", False),
        ("counter", 8, "CounterDescriptor", False),
        ("sibling_order_rank", 12, "int32", False),
    ],
    "ProcessDescriptor": [
        ("pid", 1, "int32", False),
        ("process_name", 6, "string", False),
        ("legacy_sort_index", 3, "int32", False),
        ("process_labels", 8, "string", True),
    ],
    # Perfetto declares tid int32; read as int64 (the same varint), so a writer that puts
    # a 32-bit pthread id above 2**31 (Kineto's tids of 2021) there keeps its value.
    "ThreadDescriptor": [
        ("pid", 1, "int32", False),
        ("tid", 2, "int64", False),
        ("legacy_sort_index", 3, "int32", False),
        ("thread_name", 5, "string", False),
    ],
    "CounterDescriptor": [
        ("unit_multiplier", 4, "int64", False),
        ("is_incremental", 5, "bool", False),
    ],
    "InternedData": [
        ("event_categories", 1, "InternedName", True),
        ("event_names", 2, "InternedName", True),
        ("debug_annotation_names", 3, "InternedName", True),
        ("debug_annotation_string_values", 29, "InternedBytes", True),
    ],
    # EventCategory, EventName and DebugAnnotationName share this shape.
    "InternedName": [("iid", 1, "uint64", False), ("name", 2, "string", False)],
    "InternedBytes": [("iid", 1, "uint64", False), ("str", 2, "bytes", False)],
    "ChromeEventBundle": [("metadata", 2, "ChromeMetadata", True)],
    "ChromeMetadata": [
        ("name", 1, "string", False),
        ("string_value", 2, "string", False),
        ("bool_value", 3, "bool", False),
        ("int_value", 4, "int64", False),
        ("json_value", 6, "string", False),
    ],
}

_PACKAGE = "kinetoscope.perfetto"


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(
        name="kinetoscope/perfetto_subset.proto", package=_PACKAGE, syntax="proto2"
    )
    for message, fields in _MESSAGES.items():
        out = proto.message_type.add(name=message)
        for name, number, kind, repeated in fields:
            field = out.field.add(name=name, number=number, label=_REP if repeated else _OPT)
            if kind in _SCALARS:
                field.type = _SCALARS[kind]
                if repeated and kind not in ("string", "bytes"):
                    field.options.packed = False  # Perfetto writes these unpacked
            else:
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{kind}"
    return proto


def _classes() -> dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file())
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in _MESSAGES
    }


MESSAGES = _classes()
Trace = MESSAGES["Trace"]
TracePacket = MESSAGES["TracePacket"]
