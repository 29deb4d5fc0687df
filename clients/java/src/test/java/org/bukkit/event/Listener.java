package org.bukkit.event;

public interface Listener {}
