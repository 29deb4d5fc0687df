package net.gamecommunity.api;

/** The body of inscription: a username, and a role (USER when not given). */
public record NewApiUser(String username, String role) {

  public NewApiUser {
    java.util.Objects.requireNonNull(username, "username");
  }

  public static NewApiUser named(String username) {
    return new NewApiUser(username, null);
  }

  public NewApiUser withRole(String role) {
    return new NewApiUser(username, java.util.Objects.requireNonNull(role, "role"));
  }
}
