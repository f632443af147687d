"""What a forgotten memory leaves behind: the walk that blanks its text inside stored JSON (`redactor`), the
read-time masking of what a reader may not see (`masking`), and the packet's text rendering both use (`render`)."""
