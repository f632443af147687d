"""Memory hygiene at write time: what is not worth remembering (small talk), and what is already known."""
