package net.gamecommunity.api;

/** Infected v2 statistics of one player. */
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
