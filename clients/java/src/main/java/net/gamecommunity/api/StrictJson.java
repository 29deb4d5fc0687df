package net.gamecommunity.api;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * JSON to records and back, strictly: Gson by default accepts {@code "3"} for an int and fills a
 * missing field with 0, which would hide a change of the API behind wrong values. Here a missing field,
 * a wrong type or a {@code null} outside {@link Nullable} components fails, naming the field by its
 * path. A field this client does not know is ignored (the service may add fields: that is not a
 * breaking change), unless decoding is {@code strict}, where it fails too (for tests).
 */
final class StrictJson {
  private static final TypeAdapter<JsonElement> TREE = new Gson().getAdapter(JsonElement.class);

  static final class DecodingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DecodingException(String message) {
      super(message);
    }
  }

  private StrictJson() {}

  /** Decodes strictly: an unknown field fails. */
  static Object decode(String text, Type type) {
    return decode(text, type, true);
  }

  static Object decode(String text, Type type, boolean strict) {
    return read(parse(text), type, "$", strict);
  }

  /** Parses strict JSON (no comments, single quotes, NaN or trailing data, which JsonParser allows). */
  static JsonElement parse(String text) {
    try {
      JsonReader reader = new JsonReader(new StringReader(text));
      reader.setLenient(false);
      JsonElement tree = TREE.read(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) throw new DecodingException("$: data after the JSON value");
      return tree;
    } catch (IOException | RuntimeException e) {
      if (e instanceof DecodingException d) throw d;
      throw new DecodingException("$: not valid JSON (" + e.getMessage() + ")");
    }
  }

  static Object read(JsonElement json, Type type, String path) {
    return read(json, type, path, true);
  }

  static Object read(JsonElement json, Type type, String path, boolean strict) {
    if (json == null || json.isJsonNull()) throw new DecodingException(path + ": null where a value is required");
    if (type instanceof ParameterizedType p && p.getRawType() == List.class) {
      if (!json.isJsonArray()) throw wrongType(path, "an array", json);
      JsonArray array = json.getAsJsonArray();
      List<Object> items = new ArrayList<>(array.size());
      for (int i = 0; i < array.size(); i++) items.add(read(array.get(i), p.getActualTypeArguments()[0], path + "[" + i + "]", strict));
      return List.copyOf(items);
    }
    if (!(type instanceof Class<?> c)) throw new IllegalArgumentException("unsupported type " + type);
    if (c.isRecord()) return readRecord(json, c, path, strict);
    if (c == String.class) return primitive(json, path, "a string", JsonPrimitive::isString).getAsString();
    if (c == boolean.class || c == Boolean.class) return primitive(json, path, "a boolean", JsonPrimitive::isBoolean).getAsBoolean();
    if (c == int.class || c == Integer.class) return integer(json, path, Integer.MIN_VALUE, Integer.MAX_VALUE).intValue();
    if (c == long.class || c == Long.class) return integer(json, path, Long.MIN_VALUE, Long.MAX_VALUE).longValue();
    if (c == double.class || c == Double.class) return primitive(json, path, "a number", JsonPrimitive::isNumber).getAsBigDecimal().doubleValue();
    if (c == Instant.class) {
      String text = primitive(json, path, "a timestamp string", JsonPrimitive::isString).getAsString();
      try {
        return Instant.parse(text);
      } catch (DateTimeParseException e) {
        throw new DecodingException(path + ": expected a timestamp such as 2026-11-22T09:15:30Z, got \"" + text + "\"");
      }
    }
    if (c.isEnum() && WireNamed.class.isAssignableFrom(c)) return wireNamed(json, c, path);
    throw new IllegalArgumentException("unsupported type " + type);
  }

  private static Object wireNamed(JsonElement json, Class<?> type, String path) {
    String text = primitive(json, path, "a string", JsonPrimitive::isString).getAsString();
    for (Object constant : type.getEnumConstants()) if (((WireNamed) constant).wireName().equals(text)) return constant;
    String known = Arrays.stream(type.getEnumConstants()).map(e -> ((WireNamed) e).wireName()).collect(Collectors.joining(", "));
    throw new DecodingException(path + ": expected one of " + known + ", got \"" + text + "\"");
  }

  private static Object readRecord(JsonElement json, Class<?> type, String path, boolean strict) {
    if (!json.isJsonObject()) throw wrongType(path, "an object", json);
    JsonObject object = json.getAsJsonObject();
    RecordComponent[] components = type.getRecordComponents();
    Set<String> names = Arrays.stream(components).map(RecordComponent::getName).collect(Collectors.toSet());
    List<String> unknown = object.keySet().stream().filter(k -> !names.contains(k)).sorted().toList();
    if (strict && !unknown.isEmpty()) throw new DecodingException(path + ": unknown field(s) " + String.join(", ", unknown));
    Object[] values = new Object[components.length];
    for (int i = 0; i < components.length; i++) {
      RecordComponent component = components[i];
      String at = path + "." + component.getName();
      if (!object.has(component.getName())) throw new DecodingException(at + ": missing");
      JsonElement value = object.get(component.getName());
      boolean nullable = component.isAnnotationPresent(Nullable.class) && !component.getType().isPrimitive();
      values[i] = value.isJsonNull() && nullable ? null : read(value, component.getGenericType(), at, strict);
    }
    try {
      Constructor<?> canonical = type.getDeclaredConstructor(Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
      return canonical.newInstance(values);
    } catch (InvocationTargetException e) {
      throw new DecodingException(path + ": " + e.getCause().getMessage());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot build " + type.getName(), e);
    }
  }

  private static JsonPrimitive primitive(JsonElement json, String path, String expected, java.util.function.Predicate<JsonPrimitive> kind) {
    if (json.isJsonPrimitive() && kind.test(json.getAsJsonPrimitive())) return json.getAsJsonPrimitive();
    throw wrongType(path, expected, json);
  }

  private static BigDecimal integer(JsonElement json, String path, long min, long max) {
    BigDecimal n = primitive(json, path, "an integer", JsonPrimitive::isNumber).getAsBigDecimal();
    if (n.stripTrailingZeros().scale() > 0) throw wrongType(path, "an integer", json);
    if (n.compareTo(BigDecimal.valueOf(min)) < 0 || n.compareTo(BigDecimal.valueOf(max)) > 0) {
      throw new DecodingException(path + ": " + n + " is out of range");
    }
    return n;
  }

  private static DecodingException wrongType(String path, String expected, JsonElement got) {
    String shown = got.toString();
    return new DecodingException(path + ": expected " + expected + ", got " + (shown.length() > 40 ? shown.substring(0, 40) + "…" : shown));
  }

  /** A request record as a JSON object: component names are the field names, a null component is not sent. */
  static JsonObject encode(Record request) {
    JsonObject object = new JsonObject();
    for (RecordComponent component : request.getClass().getRecordComponents()) {
      Object value;
      try {
        value = component.getAccessor().invoke(request);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot read " + component, e);
      }
      if (value != null) object.add(component.getName(), toJson(value));
    }
    return object;
  }

  static JsonElement toJson(Object value) {
    if (value == null) return JsonNull.INSTANCE;
    if (value instanceof String s) return new JsonPrimitive(s);
    if (value instanceof Boolean b) return new JsonPrimitive(b);
    if (value instanceof Integer || value instanceof Long) return new JsonPrimitive((Number) value);
    if (value instanceof Instant t) return new JsonPrimitive(t.truncatedTo(ChronoUnit.SECONDS).toString());
    throw new IllegalArgumentException("cannot send a " + value.getClass().getSimpleName());
  }
}
