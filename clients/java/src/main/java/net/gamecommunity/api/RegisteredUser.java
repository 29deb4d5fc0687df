package net.gamecommunity.api;

/**
 * A new API user and its key, which the service shows only in this answer.
 *
 * @param username the user's name, unique regardless of case
 * @param role its role ({@code USER} unless asked otherwise)
 * @param apiKey its API key: store it now, it is not shown again (hidden from {@link #toString()})
 */
public record RegisteredUser(String username, String role, String apiKey) {

  @Override
  public String toString() {
    return "RegisteredUser[username=" + username + ", role=" + role + ", apiKey hidden]";
  }
}
