package net.gamecommunity.api;

/**
 * The body of inscription: a username, and a role (USER when not given).
 *
 * @param username the new user's name: 3 to 32 characters, unique regardless of case
 * @param role its role, or null for {@code USER}
 */
public record NewApiUser(String username, @Nullable String role) {

  /**
   * Checks that the username is given.
   *
   * @param username the new user's name
   * @param role its role, or null for {@code USER}
   */
  public NewApiUser {
    java.util.Objects.requireNonNull(username, "username");
  }

  /**
   * @param username the new user's name
   * @return a user of the default role
   */
  public static NewApiUser named(String username) {
    return new NewApiUser(username, null);
  }

  /**
   * @param role the role to give it
   * @return this user with that role
   */
  public NewApiUser withRole(String role) {
    return new NewApiUser(username, java.util.Objects.requireNonNull(role, "role"));
  }
}
