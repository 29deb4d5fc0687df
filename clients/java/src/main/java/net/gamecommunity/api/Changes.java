package net.gamecommunity.api;

import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The fields a PATCH sends: a field not set is left unchanged, a cleared one is sent as JSON null.
 * The API also reads the text "null" as "clear" in the clearable fields, so that text cannot be set
 * there: refused here rather than silently clearing.
 */
final class Changes {
  private final Map<String, JsonElement> fields = new LinkedHashMap<>();

  void set(String field, Object value) {
    Objects.requireNonNull(value, () -> field + ": null is not a value; leave the field out to keep it" );
    fields.put(field, StrictJson.toJson(value));
  }

  void setClearable(String field, String value) {
    Objects.requireNonNull(value, () -> field + ": null is not a value; use clear" + capitalised(field) + "() to clear it");
    if (value.equals("null")) throw new IllegalArgumentException(field + ": the API reads the text \"null\" as clearing the field; use clear" + capitalised(field) + "()");
    set(field, value);
  }

  void clear(String field) {
    fields.put(field, JsonNull.INSTANCE);
  }

  JsonObject body(int id, String what) {
    if (fields.isEmpty()) throw new IllegalStateException(what + " " + id + ": set or clear at least one field");
    JsonObject body = new JsonObject();
    body.addProperty("id", id);
    fields.forEach(body::add);
    return body;
  }

  private static String capitalised(String field) {
    return Character.toUpperCase(field.charAt(0)) + field.substring(1);
  }
}
