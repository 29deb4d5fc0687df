package net.gamecommunity.api;

/**
 * Infected v2 statistics of one player.
 *
 * @param playerId the player's id
 * @param kill total kills
 * @param assist total assists
 * @param death total deaths
 * @param game games played
 * @param eligibleGame games that counted for points
 * @param winZ wins as a zombie
 * @param winH wins as a human
 * @param playtime time played, in the game plugin's unit
 * @param coin coins earned
 * @param point points earned
 * @param objectif objectives completed
 * @param newPlayer whether the player is new to the game
 */
public record InfectedStats(
    int playerId,
    int kill,
    int assist,
    int death,
    int game,
    int eligibleGame,
    int winZ,
    int winH,
    int playtime,
    int coin,
    int point,
    int objectif,
    boolean newPlayer) {}
