package net.gamecommunity.api;

/** A new API user and its key, which the service shows only in this answer. */
public record RegisteredUser(String username, String role, String apiKey) {

  @Override
  public String toString() {
    return "RegisteredUser[username=" + username + ", role=" + role + ", apiKey hidden]";
  }
}
