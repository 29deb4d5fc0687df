package net.gamecommunity.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * May be {@code null}: a record component the API may send as {@code null}, a method that may return
 * {@code null}, a parameter that accepts it. Everything of this client not marked so is never null (where
 * a value may be absent otherwise, it is an {@link java.util.Optional}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.RECORD_COMPONENT, ElementType.METHOD, ElementType.PARAMETER})
public @interface Nullable {}
